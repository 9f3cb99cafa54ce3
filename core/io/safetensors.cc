#include "io/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "error.h"
#include "ops/ops.h"

namespace dp {

namespace {

// A JSON value for an error message: scalars and flat arrays as text (cut at 80
// characters), anything nested by its kind and size only. Printing a hostile value whole
// could recurse as deep as it nests.
std::string brief(const nlohmann::json& v) {
  bool flat = v.is_primitive();
  if (v.is_array() && v.size() <= 16) {
    flat = true;
    for (const auto& e : v) flat = flat && e.is_primitive();
  }
  if (!flat) {
    return v.is_array() ? "(an array of " + std::to_string(v.size()) + " elements)"
                        : "(an object of " + std::to_string(v.size()) + " members)";
  }
  std::string text = v.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

const char* st_dtype(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "F32";
    case DType::kFloat64:
      return "F64";
    case DType::kInt64:
      return "I64";
    case DType::kUInt8:
      return "U8";
  }
  return "?";
}

bool parse_dtype(const std::string& s, DType* out) {
  if (s == "F32")
    *out = DType::kFloat32;
  else if (s == "F64")
    *out = DType::kFloat64;
  else if (s == "I64")
    *out = DType::kInt64;
  else
    return false;
  return true;
}

// The header is at most this big (the reference implementation's limit is 100 MB).
constexpr uint64_t kMaxHeader = 100u << 20;

}  // namespace

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    DP_CHECK(name != "__metadata__" && !name.empty(), kInvalidArgument,
             "tensor name \"" << name << "\" cannot be stored in safetensors");
    DP_CHECK(!header.contains(name), kInvalidArgument,
             "tensor name \"" << name << "\" appears twice");
    const uint64_t bytes = t.nbytes();
    header[name] = {{"dtype", st_dtype(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    DP_CHECK(f.good(), kIo, "cannot open \"" << tmp << "\" for writing: " << std::strerror(errno));
    uint64_t n = text.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    f.write(reinterpret_cast<const char*>(len), 8);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::vector<char> buf;
    for (const auto& [name, t] : tensors) {
      buf.resize(t.nbytes());
      ops::to_host(t, buf.data());
      f.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    }
    f.flush();
    DP_CHECK(f.good(), kIo, "writing \"" << tmp << "\" failed: " << std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    DP_THROW(kIo, "cannot rename \"" << tmp << "\" to \"" << path << "\": " << std::strerror(err));
  }
}

std::map<std::string, SafetensorsEntry> parse_safetensors(
    const char* bytes, size_t size, const std::string& name,
    std::map<std::string, std::string>* metadata) {
  DP_CHECK(size >= 8, kFormat,
           name << ": " << size << " bytes is too short for a safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  DP_CHECK(n <= kMaxHeader, kFormat, name << ": header length " << n << " is implausibly large");
  DP_CHECK(n <= size - 8, kFormat,
           name << ": header length " << n << " runs past the end of the file (" << size
                << " bytes): truncated");
  // A NUL would end nlohmann's input early and hide what follows it.
  DP_CHECK(std::memchr(bytes + 8, '\0', n) == nullptr, kFormat,
           name << ": the header contains a NUL byte");
  nlohmann::json header;
  // A repeated key in an object would keep only its last value here, while a reader that
  // keeps the first sees another file: each object's keys are checked as they come.
  std::vector<std::set<std::string>> keys;  // one set per open object
  auto unique_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key && !keys.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      DP_CHECK(keys.back().insert(key).second, kFormat,
               name << ": the header has the key \"" << key << "\" twice");
    }
    return true;
  };
  try {
    header = nlohmann::json::parse(bytes + 8, bytes + 8 + n, unique_keys);
  } catch (const nlohmann::json::exception& e) {
    DP_THROW(kFormat, name << ": header is not valid JSON: " << e.what());
  }
  DP_CHECK(header.is_object(), kFormat, name << ": header is not a JSON object");
  const char* data = bytes + 8 + n;
  const uint64_t data_size = size - 8 - n;
  std::map<std::string, SafetensorsEntry> out;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // every entry's [begin, end)
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::json& v = it.value();
    if (key == "__metadata__") {
      DP_CHECK(v.is_object(), kFormat, name << ": __metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        DP_CHECK(m.value().is_string(), kFormat,
                 name << ": __metadata__[\"" << m.key() << "\"] is not a string");
        if (metadata) (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    DP_CHECK(!key.empty(), kFormat, name << ": an entry has an empty name");
    DP_CHECK(
        v.is_object() && v.contains("dtype") && v.contains("shape") && v.contains("data_offsets"),
        kFormat, name << ": entry \"" << key << "\" lacks dtype, shape or data_offsets");
    SafetensorsEntry e;
    DP_CHECK(v["dtype"].is_string() && parse_dtype(v["dtype"].get<std::string>(), &e.dtype),
             kFormat,
             name << ": entry \"" << key << "\" has dtype " << brief(v["dtype"])
                  << " (supported: F32, F64, I64)");
    DP_CHECK(v["shape"].is_array() && v["shape"].size() <= static_cast<size_t>(kMaxDims), kFormat,
             name << ": entry \"" << key << "\" has a bad shape " << brief(v["shape"]));
    for (const auto& s : v["shape"]) {
      DP_CHECK(s.is_number_unsigned() || (s.is_number_integer() && s.get<int64_t>() >= 0), kFormat,
               name << ": entry \"" << key << "\" has a bad shape " << brief(v["shape"]));
      e.shape.push_back(s.get<int64_t>());
    }
    const auto& off = v["data_offsets"];
    DP_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() &&
                 off[1].is_number_unsigned(),
             kFormat, name << ": entry \"" << key << "\" has bad data_offsets " << brief(off));
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    DP_CHECK(begin <= end && end <= data_size, kFormat,
             name << ": entry \"" << key << "\" has data_offsets [" << begin << ", " << end
                  << "] outside the " << data_size << " data bytes (truncated?)");
    int64_t numel = 0;
    try {
      numel = checked_numel(e.shape, dtype_size(e.dtype), "shape");
    } catch (const Error&) {
      DP_THROW(kFormat,
               name << ": entry \"" << key << "\" has an impossible shape " << brief(v["shape"]));
    }
    const uint64_t want = static_cast<uint64_t>(numel) * dtype_size(e.dtype);
    DP_CHECK(end - begin == want, kFormat,
             name << ": entry \"" << key << "\" holds " << end - begin << " bytes but shape "
                  << shape_str(e.shape) << " of " << dtype_name(e.dtype) << " needs " << want);
    e.data.assign(data + begin, data + end);
    spans.emplace_back(begin, end);
    out.emplace(key, std::move(e));
  }
  // As the reference implementation: the entries tile the data section exactly, with no
  // gap, overlap or trailing bytes (a header length off by a few bytes would otherwise
  // read every tensor shifted).
  std::sort(spans.begin(), spans.end());
  uint64_t expect = 0;
  for (const auto& [b, e] : spans) {
    DP_CHECK(b == expect, kFormat,
             name << ": the entries' data_offsets leave a gap or overlap at byte " << expect
                  << " of the data (an entry starts at " << b << ")");
    expect = e;
  }
  DP_CHECK(expect == data_size, kFormat,
           name << ": the entries cover " << expect << " bytes but the data section has "
                << data_size << " (corrupt header length or trailing bytes)");
  return out;
}

std::map<std::string, SafetensorsEntry> load_safetensors(
    const std::string& path, std::map<std::string, std::string>* metadata) {
  std::error_code ec;
  DP_CHECK(!std::filesystem::is_directory(path, ec), kIo,
           "cannot read \"" << path << "\": it is a directory");
  std::ifstream f(path, std::ios::binary);
  DP_CHECK(f.good(), kIo, "cannot open \"" << path << "\": " << std::strerror(errno));
  std::vector<char> bytes;
  try {
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {
    DP_THROW(kIo, "reading \"" << path << "\" failed: " << e.what());
  }
  DP_CHECK(!f.bad(), kIo, "reading \"" << path << "\" failed");
  return parse_safetensors(bytes.data(), bytes.size(), "\"" + path + "\"", metadata);
}

}  // namespace dp
