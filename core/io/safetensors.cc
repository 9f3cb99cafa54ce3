#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

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
    case DType::kBFloat16:
      return "BF16";
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
  else if (s == "BF16")
    *out = DType::kBFloat16;
  else
    return false;
  return true;
}

// The header is at most this big (the reference implementation's limit is 100 MB).
constexpr uint64_t kMaxHeader = 100u << 20;

bool valid_utf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    int extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++p;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    static const uint32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    p += extra + 1;
  }
  return true;
}

// Where a save writes: through a symbolic link at `path` to the file it names (so the
// link stays a link), else `path` itself.
std::string save_target(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_symlink(path, ec)) {
    const std::filesystem::path resolved = std::filesystem::canonical(path, ec);
    if (!ec) return resolved.string();  // a dangling link is replaced, as a missing file
  }
  return path;
}

// A file written beside `target` under a name of its own, then renamed over `target`:
// readers see the old file or the new one, never a part of either, even while other
// threads or processes save to the same path (each writes its own temporary file). The
// new file keeps the mode of the file it replaces (a fresh one gets 0666 less the umask).
// Until commit() succeeds the destructor removes the temporary file. A target that is
// neither a regular file nor missing (a device such as /dev/null, a FIFO) is written
// directly, as nothing can be renamed over it; a directory is refused before anything is
// written.
class TempFile {
 public:
  explicit TempFile(std::string target) : target_(std::move(target)) {
    struct stat st;
    const bool exists = ::stat(target_.c_str(), &st) == 0;
    DP_CHECK(!exists || !S_ISDIR(st.st_mode), kIo,
             "cannot save to \"" << target_ << "\": it is a directory");
    if (exists && !S_ISREG(st.st_mode)) {
      name_ = target_;
      direct_ = true;
      fd_ = ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      DP_CHECK(fd_ >= 0, kIo,
               "cannot open \"" << target_ << "\" to save to it: " << std::strerror(errno));
      return;
    }
    // Created with the replaced file's permission bits (less the umask), never wider:
    // a private file's new contents are never readable by others, even for a moment.
    const bool replaces = exists;
    const mode_t mode = replaces ? (st.st_mode & 0777) : 0666;
    static std::atomic<uint64_t> serial{0};
    for (int attempt = 0; fd_ < 0; ++attempt) {
      name_ = target_ + ".tmp." + std::to_string(::getpid()) + "." +
              std::to_string(serial.fetch_add(1, std::memory_order_relaxed));
      fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
        DP_THROW(kIo, "cannot create \"" << name_ << "\" to save \"" << target_
                                         << "\": " << std::strerror(errno));
      }
    }
    // The exact mode, which the umask may have narrowed; a failure leaves it narrower.
    if (replaces) (void)::fchmod(fd_, st.st_mode & 07777);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !direct_) ::unlink(name_.c_str());
  }

  void write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      DP_CHECK(w > 0, kIo, "writing \"" << name_ << "\" failed: " << std::strerror(errno));
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  // Flushes the data to the disk, then renames: after a crash `target` holds the old
  // file or the whole new one.
  void commit() {
    // A device or FIFO has no disk to flush to (fsync fails on some with EINVAL).
    DP_CHECK(direct_ || ::fsync(fd_) == 0, kIo,
             "writing \"" << name_ << "\" failed: " << std::strerror(errno));
    const int fd = fd_;
    fd_ = -1;
    DP_CHECK(::close(fd) == 0, kIo, "writing \"" << name_ << "\" failed: " << std::strerror(errno));
    if (direct_) {
      committed_ = true;
      return;
    }
    DP_CHECK(
        std::rename(name_.c_str(), target_.c_str()) == 0, kIo,
        "cannot rename \"" << name_ << "\" to \"" << target_ << "\": " << std::strerror(errno));
    committed_ = true;
    // The rename itself reaches the disk with the directory. Not every file system can
    // sync a directory; the file is in place either way.
    std::string dir = std::filesystem::path(target_).parent_path().string();
    if (dir.empty()) dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  std::string target_, name_;
  int fd_ = -1;
  bool committed_ = false;
  bool direct_ = false;  // writing the target itself, not a temporary file
};

}  // namespace

void save_safetensors(const std::string& path,
                      const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  for (const auto& [key, value] : metadata) {
    DP_CHECK(valid_utf8(key), kInvalidArgument,
             "metadata key \"" << key << "\" is not valid UTF-8, which safetensors requires");
    DP_CHECK(valid_utf8(value), kInvalidArgument,
             "metadata[\"" << key << "\"] is not valid UTF-8, which safetensors requires");
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    DP_CHECK(name != "__metadata__" && !name.empty(), kInvalidArgument,
             "tensor name \"" << name << "\" cannot be stored in safetensors");
    DP_CHECK(valid_utf8(name), kInvalidArgument,
             "tensor name \"" << name << "\" is not valid UTF-8, which safetensors requires");
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

  const std::string target = save_target(path);
  TempFile tmp(target);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(uint64_t{text.size()} >> (8 * i));
  tmp.write(len, 8);
  tmp.write(text.data(), text.size());
  std::vector<char> buf;
  for (const auto& [name, t] : tensors) {
    buf.resize(t.nbytes());
    ops::to_host(t, buf.data());
    tmp.write(buf.data(), buf.size());
  }
  tmp.commit();
}

namespace {

// The header's length from the file's first 8 bytes, checked against the file's size.
uint64_t header_length(const char* first8, uint64_t size, const std::string& name) {
  DP_CHECK(size >= 8, kFormat,
           name << ": " << size << " bytes is too short for a safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first8[i]);
  DP_CHECK(n <= kMaxHeader, kFormat, name << ": header length " << n << " is implausibly large");
  DP_CHECK(n <= size - 8, kFormat,
           name << ": header length " << n << " runs past the end of the file (" << size
                << " bytes): truncated");
  return n;
}

// A valid header nests three deep: the header object, an entry (or __metadata__), an
// entry's shape or data_offsets. Deeper input is refused as it is read: the parsed value
// of a header of nothing but brackets would take tens of times the header's size.
constexpr int kMaxHeaderDepth = 3;

// Where a header's JSON stops being JSON, for an error message that names the place in
// the file instead of the parser's own text. `byte` is the parser's position: the 1-based
// index of the last byte it read, past n when the header ran out first.
std::string json_error_place(const char* text, uint64_t n, std::size_t byte) {
  std::ostringstream out;
  if (n == 0) {
    out << ": it is empty (the header length is 0)";
  } else if (byte == 0 || byte > n) {
    out << ": its " << n
        << " bytes end inside a value (the header cut short, or a header length too small)";
  } else {
    const auto c = static_cast<unsigned char>(text[byte - 1]);
    out << " at byte " << 8 + byte - 1 << " of the file: unexpected ";
    if (c >= 0x20 && c < 0x7f) {
      out << "'" << c << "'";
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      out << "byte " << hex;
    }
    out << " (the header is bytes 8 to " << 8 + n - 1 << ")";
  }
  return out.str();
}

// Parses and checks the JSON of a header: one object, no key twice in any object.
nlohmann::json parse_header(const char* text, uint64_t n, const std::string& name) {
  // A NUL would end nlohmann's input early and hide what follows it.
  DP_CHECK(std::memchr(text, '\0', n) == nullptr, kFormat,
           name << ": the header contains a NUL byte");
  // A repeated key in an object would keep only its last value here, while a reader that
  // keeps the first sees another file: each object's keys are checked as they come.
  std::vector<std::set<std::string>> keys;  // one set per open object
  auto check = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      DP_CHECK(depth < kMaxHeaderDepth, kFormat,
               name << ": the header nests deeper than " << kMaxHeaderDepth
                    << " levels, which no safetensors header does");
    }
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key && !keys.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      DP_CHECK(keys.back().insert(key).second, kFormat,
               name << ": the header has the key \"" << key << "\" twice");
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + n, check);
  } catch (const nlohmann::json::parse_error& e) {
    DP_THROW(kFormat,
             name << ": the header is not valid JSON" << json_error_place(text, n, e.byte));
  } catch (const nlohmann::json::out_of_range&) {  // a number past a double's range
    DP_THROW(kFormat, name << ": the header is not valid JSON: it holds a number too large for a "
                              "double");
  } catch (const nlohmann::json::exception&) {
    DP_THROW(kFormat, name << ": the header is not valid JSON");
  }
  DP_CHECK(header.is_object(), kFormat, name << ": header is not a JSON object");
  return header;
}

// The header's __metadata__ (if any) into `metadata`: a map of strings.
void read_metadata(const nlohmann::json& header, const std::string& name,
                   std::map<std::string, std::string>* metadata) {
  auto it = header.find("__metadata__");
  if (it == header.end()) return;
  DP_CHECK(it->is_object(), kFormat, name << ": __metadata__ is not an object");
  for (auto m = it->begin(); m != it->end(); ++m) {
    DP_CHECK(m.value().is_string(), kFormat,
             name << ": __metadata__[\"" << m.key() << "\"] is not a string");
    if (metadata) (*metadata)[m.key()] = m.value().get<std::string>();
  }
}

// A file opened for reading. Only a regular file is read: a FIFO would block and a device
// such as /dev/zero never ends.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    DP_CHECK(fd_ >= 0, kIo, "cannot open \"" << path << "\": " << std::strerror(errno));
    try {  // a constructor that throws runs no destructor: the descriptor is closed here
      struct stat st;
      DP_CHECK(::fstat(fd_, &st) == 0, kIo,
               "cannot read \"" << path << "\": " << std::strerror(errno));
      DP_CHECK(!S_ISDIR(st.st_mode), kIo, "cannot read \"" << path << "\": it is a directory");
      DP_CHECK(S_ISREG(st.st_mode), kIo,
               "cannot read \"" << path << "\": it is not a regular file");
      size_ = static_cast<uint64_t>(st.st_size);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { ::close(fd_); }

  uint64_t size() const { return size_; }

  // Reads up to n bytes at `offset`; fewer only where the file ends sooner (it shrank).
  size_t read(char* out, uint64_t offset, size_t n) const {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      DP_CHECK(r >= 0, kIo, "reading \"" << path_ << "\" failed: " << std::strerror(errno));
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace

std::map<std::string, SafetensorsEntry> parse_safetensors(
    const char* bytes, size_t size, const std::string& name,
    std::map<std::string, std::string>* metadata) {
  const uint64_t n = header_length(bytes, size, name);
  const nlohmann::json header = parse_header(bytes + 8, n, name);
  read_metadata(header, name, metadata);
  const char* data = bytes + 8 + n;
  const uint64_t data_size = size - 8 - n;
  std::map<std::string, SafetensorsEntry> out;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // every entry's [begin, end)
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::json& v = it.value();
    if (key == "__metadata__") continue;
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
  const InputFile f(path);
  std::vector<char> bytes(f.size());
  bytes.resize(f.read(bytes.data(), 0, bytes.size()));
  return parse_safetensors(bytes.data(), bytes.size(), "\"" + path + "\"", metadata);
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  const InputFile f(path);
  const std::string name = "\"" + path + "\"";
  char first8[8] = {0};
  const uint64_t got = f.read(first8, 0, 8);
  const uint64_t n = header_length(first8, got < 8 ? got : f.size(), name);
  std::vector<char> text(n);
  DP_CHECK(f.read(text.data(), 8, n) == n, kFormat,
           name << ": header length " << n << " runs past the end of the file: truncated");
  std::map<std::string, std::string> metadata;
  read_metadata(parse_header(text.data(), n, name), name, &metadata);
  return metadata;
}

}  // namespace dp
