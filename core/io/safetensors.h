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

// Writes the tensors (host copies of their contents) to `path`. The file is written to
// `path`.tmp and renamed, so an interrupted write never leaves a partial file at `path`.
void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads and validates a whole file. Throws kIo (cannot open/read) or kFormat (truncated,
// corrupt header, bad dtype, offsets out of range or not matching the shape), naming
// the file and the entry.
std::map<std::string, SafetensorsEntry> load_safetensors(
    const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

// The same from bytes in memory (the fuzz target uses it).
std::map<std::string, SafetensorsEntry> parse_safetensors(
    const char* bytes, size_t size, const std::string& name,
    std::map<std::string, std::string>* metadata = nullptr);

}  // namespace dp
