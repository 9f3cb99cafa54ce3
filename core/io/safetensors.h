// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON ({"name": {"dtype": "F32", "shape": [...],
// "data_offsets": [begin, end]}, ..., "__metadata__": {...}}), then the raw data, each
// tensor's bytes at [begin, end) of the data section. The header is parsed with
// nlohmann::json; every field is checked before anything is used.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace dp {

struct SafetensorsEntry {
  DType dtype;
  Shape shape;
  std::vector<char> data;  // numel * dtype size bytes, row-major, little-endian
};

// Writes the tensors (host copies of their contents) to `path`: to a temporary file of its
// own beside it, synced and renamed over it, so readers, concurrent savers and a crash
// never see a partial file at `path`. Keeps the replaced file's mode, and a symbolic link
// at `path` (the file it names is replaced). Names, metadata keys and values must be valid
// UTF-8 (kInvalidArgument names the one that is not).
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads and validates a whole file. Throws kIo (cannot open/read) or kFormat (truncated,
// corrupt header, bad dtype, offsets out of range or not matching the shape), naming
// the file and the entry.
std::map<std::string, SafetensorsEntry> load_safetensors(
    const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// The __metadata__ of a file, reading and checking its header only: the header must be
// whole and valid, the tensors are neither read nor checked (so a file of dtypes this
// library does not hold still gives its metadata). Throws kIo or kFormat as above.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

// The same from bytes in memory (the fuzz target uses it).
std::map<std::string, SafetensorsEntry> parse_safetensors(
    const char* bytes, size_t size, const std::string& name,
    std::map<std::string, std::string>* metadata = nullptr);

}  // namespace dp
