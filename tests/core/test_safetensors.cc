// The safetensors reader and writer (core/io/safetensors.h) at the byte level: round trips
// of every dtype the C ABI has, and each field of a file corrupted in turn, which must be
// rejected with kFormat and a message naming the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "context/context.h"
#include "error.h"
#include "io/safetensors.h"
#include "ops/ops.h"

namespace dp {
namespace {

constexpr const char* kName = "test.safetensors";

// "a": F32 [2, 3] = 1..6 at [0, 24), "b": I64 [2] = {7, -8} at [24, 40).
const std::string kHeader = R"({"__metadata__":{"format":"pt"},)"
                            R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                            R"("b":{"dtype":"I64","shape":[2],"data_offsets":[24,40]}})";

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

std::string reference_data() {
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const int64_t b[2] = {7, -8};
  std::string d(reinterpret_cast<const char*>(a), sizeof a);
  d.append(reinterpret_cast<const char*>(b), sizeof b);
  return d;
}

// The 8-byte little-endian length, the header padded with spaces to a multiple of 8
// (with at least `min_pad` spaces), then the data.
std::string make_file(std::string header, const std::string& data, size_t min_pad = 0) {
  header.append(min_pad, ' ');
  header.append((8 - header.size() % 8) % 8, ' ');
  return le64(header.size()) + header + data;
}

std::string reference_file() {
  return make_file(kHeader, reference_data());
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << "\"" << from << "\" is not in " << s;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::map<std::string, SafetensorsEntry> parse(const std::string& bytes) {
  return parse_safetensors(bytes.data(), bytes.size(), kName);
}

// Parsing fails with kFormat and a message that names the file and contains `needle`.
void expect_format_error(const std::string& bytes, const std::string& needle) {
  try {
    parse(bytes);
    ADD_FAILURE() << "accepted; expected an error mentioning \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFormat) << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find(kName), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos)
        << "\"" << msg << "\" lacks \"" << needle << "\"";
  }
}

template <class T>
std::vector<T> values_of(const SafetensorsEntry& e) {
  std::vector<T> v(e.data.size() / sizeof(T));
  std::memcpy(v.data(), e.data.data(), v.size() * sizeof(T));
  return v;
}

// The process's open file descriptors.
size_t open_descriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    ContextOptions o;
    o.cpu_devices = 1;
    o.load_cuda = false;
    ctx_ = Context::create(o);
    char dir[] = "/tmp/dp_safetensors_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  static std::string read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }

  // The names in the test's directory, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::shared_ptr<Context> ctx_;
  std::string dir_;
};

// ---------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------

TEST_F(Safetensors, SaveThenParseRoundTripsEveryDtypeShapeAndTheMetadata) {
  const float f[6] = {1.5f, -2.25f, 3e-8f, -0.0f, 1e30f, 7.0f};
  const double d[3] = {0.1, -1e300, 2.0};
  const int64_t i[1] = {-(int64_t{1} << 40)};
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f", ops::from_host(ctx_, {2, 3}, DType::kFloat32, cpu(0), f)},
      {"d", ops::from_host(ctx_, {3}, DType::kFloat64, cpu(0), d)},
      {"scalar", ops::from_host(ctx_, {}, DType::kInt64, cpu(0), i)},
      {"empty", ops::zeros(ctx_, {0, 4}, DType::kFloat32, cpu(0))},
  };
  save_safetensors(path("all.safetensors"), tensors, {{"format", "pt"}, {"note", "x y"}});
  std::map<std::string, std::string> meta;
  const std::string bytes = read(path("all.safetensors"));
  const auto entries = parse_safetensors(bytes.data(), bytes.size(), kName, &meta);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries.at("f").dtype, DType::kFloat32);
  EXPECT_EQ(entries.at("f").shape, (Shape{2, 3}));
  EXPECT_EQ(values_of<float>(entries.at("f")), std::vector<float>(f, f + 6));
  EXPECT_EQ(entries.at("d").dtype, DType::kFloat64);
  EXPECT_EQ(values_of<double>(entries.at("d")), std::vector<double>(d, d + 3));
  EXPECT_EQ(entries.at("scalar").dtype, DType::kInt64);
  EXPECT_EQ(entries.at("scalar").shape, Shape{});
  EXPECT_EQ(values_of<int64_t>(entries.at("scalar")), std::vector<int64_t>(i, i + 1));
  EXPECT_EQ(entries.at("empty").shape, (Shape{0, 4}));
  EXPECT_TRUE(entries.at("empty").data.empty());
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "x y"}}));
  // load_safetensors reads the same from the file
  EXPECT_EQ(load_safetensors(path("all.safetensors")).at("f").data, entries.at("f").data);
}

TEST_F(Safetensors, SaveAlignsTheDataToEightBytesAndLeavesNoTemporaryFile) {
  const float f[3] = {1, 2, 3};
  save_safetensors(path("x.safetensors"),
                   {{"x", ops::from_host(ctx_, {3}, DType::kFloat32, cpu(0), f)}});
  EXPECT_EQ(files(), std::vector<std::string>{"x.safetensors"});  // no temporary left
  const std::string bytes = read(path("x.safetensors"));
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes.size(), 8 + n + sizeof f);
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + n, f, sizeof f), 0);
}

TEST_F(Safetensors, SaveRejectsNamesSafetensorsCannotHoldAndWritesNothing) {
  const Tensor t = ops::zeros(ctx_, {2}, DType::kFloat32, cpu(0));
  const std::vector<std::vector<std::pair<std::string, Tensor>>> bad = {
      {{"", t}}, {{"__metadata__", t}}, {{"a", t}, {"a", t}}};
  for (const auto& tensors : bad) {
    try {
      save_safetensors(path("bad.safetensors"), tensors);
      ADD_FAILURE() << "saved a file with name \"" << tensors.back().first << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("\"" + tensors.back().first + "\""), std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path("bad.safetensors")));
  }
}

TEST_F(Safetensors, SaveIntoAMissingDirectoryThrowsIo) {
  const Tensor t = ops::zeros(ctx_, {2}, DType::kFloat32, cpu(0));
  try {
    save_safetensors(path("missing/x.safetensors"), {{"t", t}});
    ADD_FAILURE() << "saved into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing/x.safetensors"), std::string::npos) << e.what();
  }
}

TEST_F(Safetensors, SaveToADirectoryIsRefusedBeforeAnythingIsWritten) {
  const Tensor t = ops::zeros(ctx_, {2}, DType::kFloat32, cpu(0));
  std::filesystem::create_directory(path("a_dir"));
  try {
    save_safetensors(path("a_dir"), {{"t", t}});
    ADD_FAILURE() << "saved over a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find("a_dir\": it is a directory"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(files(), (std::vector<std::string>{"a_dir"})) << "a temporary file was left";
}

// A FIFO (or a device such as /dev/null) cannot be replaced by a rename: the save writes
// through it, and it stays a FIFO.
TEST_F(Safetensors, SaveToAFifoWritesThroughItAndLeavesItAFifo) {
  const float v[3] = {1, 2, 3};
  const Tensor t = ops::from_host(ctx_, {3}, DType::kFloat32, cpu(0), v);
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  // Held open for reading (on Linux O_RDWR opens a FIFO without waiting for a writer), so
  // the save's open does not wait, and a pipe's buffer holds the small file.
  const int fd = open(path("fifo").c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  save_safetensors(path("fifo"), {{"t", t}});
  std::string received;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    received.append(buf, static_cast<size_t>(n));
  close(fd);
  struct stat st;
  ASSERT_EQ(lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by another file";
  EXPECT_EQ(files(), (std::vector<std::string>{"fifo"}));
  // What came through is the file a save to a regular path writes.
  save_safetensors(path("regular.safetensors"), {{"t", t}});
  EXPECT_EQ(received, read(path("regular.safetensors")));
}

TEST_F(Safetensors, SaveRejectsNamesAndMetadataThatAreNotUtf8NamingThem) {
  const Tensor t = ops::zeros(ctx_, {2}, DType::kFloat32, cpu(0));
  auto expect_rejected = [&](const std::vector<std::pair<std::string, Tensor>>& tensors,
                             const std::map<std::string, std::string>& meta,
                             const std::string& needle) {
    try {
      save_safetensors(path("bad.safetensors"), tensors, meta);
      ADD_FAILURE() << "saved a file naming " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_TRUE(files().empty());
  };
  expect_rejected({{"w\xff", t}}, {}, "tensor name \"w\xff\"");
  expect_rejected({{"w", t}}, {{"note", "caf\xe9"}}, "metadata[\"note\"]");
  expect_rejected({{"w", t}}, {{"\xc0\xaf", "x"}}, "metadata key");         // an overlong '/'
  expect_rejected({{"w", t}}, {{"s", "\xed\xa0\x80"}}, "metadata[\"s\"]");  // a surrogate
  // Valid multi-byte text is kept as it is.
  save_safetensors(path("ok.safetensors"), {{"gewicht\xc3\xa4", t}},
                   {{"note", "\xe2\x82\xac \xf0\x9f\x98\x80"}});
  std::map<std::string, std::string> meta;
  EXPECT_EQ(load_safetensors(path("ok.safetensors"), &meta).count("gewicht\xc3\xa4"), 1u);
  EXPECT_EQ(meta.at("note"), "\xe2\x82\xac \xf0\x9f\x98\x80");
}

// Two threads save different contents to one path over and over while this thread reads
// it: every read gets one of the two files whole. (With one fixed temporary name the
// savers wrote into each other's file: reads saw empty, truncated and mixed files.)
TEST_F(Safetensors, ConcurrentSavesToOnePathNeverShowAPartialOrMixedFile) {
  const int64_t n = 1 << 20;  // 4 MiB: a save takes long enough for the others to overlap
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  const Tensor ta = ops::from_host(ctx_, {n}, DType::kFloat32, cpu(0), a.data());
  const Tensor tb = ops::from_host(ctx_, {n}, DType::kFloat32, cpu(0), b.data());
  const std::string p = path("shared.safetensors");
  save_safetensors(p, {{"w", ta}});
  std::atomic<int> running{2};
  std::vector<std::string> errors;
  std::mutex mu;
  auto saver = [&](const Tensor& t) {
    for (int i = 0; i < 25; ++i) {
      try {
        save_safetensors(p, {{"w", t}});
      } catch (const Error& e) {
        std::lock_guard<std::mutex> lock(mu);
        errors.push_back(e.what());
      }
    }
    --running;
  };
  std::thread first(saver, ta), second(saver, tb);
  int reads = 0, mixed = 0;
  std::vector<std::string> read_errors;
  for (; running > 0; ++reads) {
    try {
      const auto v = values_of<float>(load_safetensors(p).at("w"));
      const bool all_a = std::all_of(v.begin(), v.end(), [](float x) { return x == 1.0f; });
      const bool all_b = std::all_of(v.begin(), v.end(), [](float x) { return x == 2.0f; });
      mixed += !(all_a || all_b);
    } catch (const Error& e) {
      read_errors.push_back(e.what());
    }
  }
  first.join();
  second.join();
  EXPECT_TRUE(errors.empty()) << errors.size() << " failed saves, the first: " << errors.front();
  EXPECT_TRUE(read_errors.empty()) << read_errors.size() << " of " << reads
                                   << " reads failed, the first: " << read_errors.front();
  EXPECT_EQ(mixed, 0) << "of " << reads << " reads";
  EXPECT_EQ(files(), std::vector<std::string>{"shared.safetensors"});
}

// A write that fails part way (here: past the process's file size limit) leaves the
// earlier file as it was and no temporary file behind.
TEST_F(Safetensors, AFailedWriteKeepsTheEarlierFileAndRemovesItsTemporary) {
  const float small[2] = {3, 4};
  const std::string p = path("model.safetensors");
  save_safetensors(p, {{"w", ops::from_host(ctx_, {2}, DType::kFloat32, cpu(0), small)}});
  const std::string before = read(p);
  const Tensor big = ops::zeros(ctx_, {1 << 20}, DType::kFloat32, cpu(0));  // 4 MiB

  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 1 << 20;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  Code code = Code::kOk;
  std::string message;
  try {
    save_safetensors(p, {{"w", big}});
  } catch (const Error& e) {
    code = e.code();
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(code, Code::kIo) << message;
  EXPECT_NE(message.find("model.safetensors.tmp."), std::string::npos) << message;
  EXPECT_EQ(read(p), before);
  EXPECT_EQ(files(), std::vector<std::string>{"model.safetensors"});
}

TEST_F(Safetensors, SaveKeepsTheReplacedFilesModeAndASymbolicLink) {
  const float f[2] = {1, 2}, g[2] = {5, 6};
  const Tensor tf = ops::from_host(ctx_, {2}, DType::kFloat32, cpu(0), f);
  const Tensor tg = ops::from_host(ctx_, {2}, DType::kFloat32, cpu(0), g);
  const std::string p = path("private.safetensors");
  save_safetensors(p, {{"w", tf}});
  ASSERT_EQ(chmod(p.c_str(), 0600), 0);
  save_safetensors(p, {{"w", tg}});
  struct stat st;
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(values_of<float>(load_safetensors(p).at("w")), (std::vector<float>{5, 6}));

  // A fresh file gets the default mode: 0666 less the umask.
  const mode_t mask = umask(022);
  umask(mask);
  save_safetensors(path("fresh.safetensors"), {{"w", tf}});
  ASSERT_EQ(stat(path("fresh.safetensors").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0666u & ~mask);

  // Through a link: the link stays, the file it names gets the new contents.
  ASSERT_EQ(symlink("private.safetensors", path("latest.safetensors").c_str()), 0);
  save_safetensors(path("latest.safetensors"), {{"w", tf}});
  EXPECT_TRUE(std::filesystem::is_symlink(path("latest.safetensors")));
  EXPECT_EQ(values_of<float>(load_safetensors(p).at("w")), (std::vector<float>{1, 2}));
  EXPECT_EQ(files(), (std::vector<std::string>{"fresh.safetensors", "latest.safetensors",
                                               "private.safetensors"}));
}

// ---------------------------------------------------------------------------------------
// Reading: the reference file, then each field corrupted
// ---------------------------------------------------------------------------------------

TEST_F(Safetensors, ParseReadsTheHandWrittenReferenceFile) {
  std::map<std::string, std::string> meta;
  const std::string bytes = reference_file();
  const auto entries = parse_safetensors(bytes.data(), bytes.size(), kName, &meta);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(values_of<float>(entries.at("a")), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(entries.at("a").shape, (Shape{2, 3}));
  EXPECT_EQ(values_of<int64_t>(entries.at("b")), (std::vector<int64_t>{7, -8}));
  EXPECT_EQ(meta.at("format"), "pt");
}

TEST_F(Safetensors, ParseAcceptsAnEmptyHeaderObjectAndZeroSizedTensors) {
  EXPECT_TRUE(parse(make_file("{}", "")).empty());
  const auto entries =
      parse(make_file(R"({"z":{"dtype":"F64","shape":[3,0],"data_offsets":[0,0]}})", ""));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries.at("z").shape, (Shape{3, 0}));
}

TEST_F(Safetensors, ParseRejectsFilesShorterThanTheLengthField) {
  const std::string bytes = reference_file();
  for (size_t n = 0; n < 8; ++n) {
    SCOPED_TRACE(n);
    expect_format_error(bytes.substr(0, n), "too short");
  }
}

TEST_F(Safetensors, ParseRejectsACorruptionOfAnyByteOfTheLengthField) {
  const std::string good = reference_file();
  for (int i = 0; i < 8; ++i) {
    for (const unsigned char flip : {0x01, 0x10, 0x80}) {
      std::string bytes = good;
      bytes[i] = static_cast<char>(static_cast<unsigned char>(bytes[i]) ^ flip);
      SCOPED_TRACE("byte " + std::to_string(i) + " ^ " + std::to_string(flip));
      expect_format_error(bytes, "");
    }
  }
}

TEST_F(Safetensors, ParseRejectsHeaderLengthsPastTheEndOrImplausiblyLarge) {
  const std::string good = reference_file();
  const uint64_t size = good.size();
  for (const uint64_t n :
       {size - 7, size, uint64_t{1} << 40, std::numeric_limits<uint64_t>::max()}) {
    SCOPED_TRACE(n);
    expect_format_error(le64(n) + good.substr(8), "header length " + std::to_string(n));
  }
}

TEST_F(Safetensors, ParseRejectsHeadersThatAreNotAJsonObject) {
  const std::string data = reference_data();
  expect_format_error(make_file("", data), "not valid JSON");
  expect_format_error(make_file(kHeader.substr(0, kHeader.size() - 1), data), "not valid JSON");
  expect_format_error(make_file(replaced(kHeader, "\"a\":", "a:"), data), "not valid JSON");
  expect_format_error(make_file(replaced(kHeader, ",\"b\"", ",,\"b\""), data), "not valid JSON");
  expect_format_error(make_file("[1,2]", data), "not a JSON object");
  expect_format_error(make_file("\"a\"", data), "not a JSON object");
  // a length field that takes data bytes into the header
  std::string bytes = reference_file();
  const uint64_t n = bytes.size() - 8 - 8;
  expect_format_error(le64(n) + bytes.substr(8), "");
}

TEST_F(Safetensors, ParseRejectsEntriesLackingAFieldOrNotObjects) {
  const std::string data = reference_data();
  for (const char* field : {"\"dtype\":\"F32\",", "\"shape\":[2,3],", ",\"data_offsets\":[0,24]"}) {
    SCOPED_TRACE(field);
    expect_format_error(make_file(replaced(kHeader, field, ""), data), "\"a\" lacks");
  }
  expect_format_error(make_file(R"({"a":5})", data), "\"a\" lacks");
  expect_format_error(make_file(R"({"a":[1,2,3]})", data), "\"a\" lacks");
}

TEST_F(Safetensors, ParseRejectsBadDtypes) {
  const std::string good = reference_file();
  // in place, same length: byte-level corruptions of the dtype string
  for (const char* dtype : {"F16", "f32", "I32", "U64", "F3 ", "X32"}) {
    SCOPED_TRACE(dtype);
    std::string bytes = good;
    const size_t at = bytes.find("\"F32\"") + 1;
    bytes.replace(at, 3, std::string(dtype).substr(0, 3));
    expect_format_error(bytes, "\"a\"");
  }
  const std::string data = reference_data();
  for (const char* dtype : {"\"F16\"", "\"U8\"", "\"BOOL\"", "\"\"", "32", "null", "[\"F32\"]"}) {
    SCOPED_TRACE(dtype);
    expect_format_error(make_file(replaced(kHeader, "\"F32\"", dtype), data), "has dtype");
  }
}

// Nesting past a header's three levels is refused as soon as it is read, so a small file
// of brackets cannot make the parser build a huge value.
TEST_F(Safetensors, ParseRefusesHeadersNestedDeeperThanAnyValidOne) {
  const std::string data = reference_data();
  expect_format_error(
      make_file(replaced(kHeader, R"("format":"pt")", R"("format":{"a":["b"]})"), data),
      "nests deeper than 3 levels");
  for (const std::string opener : {"[", "{\"a\":"}) {
    std::string deep;
    for (int i = 0; i < 1000000; ++i) deep += opener;  // millions of bytes, never closed
    SCOPED_TRACE(opener);
    expect_format_error(make_file(deep, ""), "nests deeper");
  }
}

TEST_F(Safetensors, ParseRejectsBadShapes) {
  const std::string data = reference_data();
  const char* bad[] = {"2",    "[2,-3]",   "[2,3.5]", "[\"2\",3]", "[1,1,1,1,1,1,1,1,6]",
                       "null", "{\"0\":2}"};
  for (const char* shape : bad) {
    SCOPED_TRACE(shape);
    expect_format_error(make_file(replaced(kHeader, "[2,3]", shape), data), "bad shape");
  }
  // nested one level too deep: refused while the header is read
  expect_format_error(make_file(replaced(kHeader, "[2,3]", "[2,[3]]"), data), "nests deeper");
  // sizes whose product overflows, or that do not fit int64
  for (const char* shape :
       {"[4294967296,4294967296]", "[18446744073709551615]", "[9223372036854775807,2]"}) {
    SCOPED_TRACE(shape);
    expect_format_error(make_file(replaced(kHeader, "[2,3]", shape), data), "\"a\"");
  }
  // a shape that needs other than the bytes the offsets hold
  const std::string good = reference_file();
  for (const char* shape : {"[3,3]", "[2,4]", "[1,3]", "[2,0]"}) {
    SCOPED_TRACE(shape);
    std::string bytes = good;
    bytes.replace(bytes.find("[2,3]"), 5, shape);  // in place
    expect_format_error(bytes, "\"a\" holds 24 bytes");
  }
}

TEST_F(Safetensors, ParseRejectsBadDataOffsets) {
  const std::string data = reference_data();
  const struct {
    const char* offsets;
    const char* needle;
  } cases[] = {
      {"[0]", "bad data_offsets"},
      {"[0,24,40]", "bad data_offsets"},
      {"[-1,23]", "bad data_offsets"},
      {"[0,24.0]", "bad data_offsets"},
      {"[\"0\",\"24\"]", "bad data_offsets"},
      {"null", "bad data_offsets"},
      {"[24,0]", "outside"},
      {"[0,48]", "outside"},
      {"[40,64]", "outside"},
      {"[0,18446744073709551615]", "outside"},
      {"[0,20]", "holds 20 bytes"},
      {"[4,24]", "holds 20 bytes"},
      {"[0,28]", "holds 28 bytes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.offsets);
    expect_format_error(make_file(replaced(kHeader, "[0,24]", c.offsets), data), c.needle);
  }
}

TEST_F(Safetensors, ParseRejectsDataTruncatedByAnyAmount) {
  const std::string good = reference_file();
  const size_t data_begin = good.size() - 40;
  for (size_t cut = 1; cut <= 40; ++cut) {
    SCOPED_TRACE(cut);
    expect_format_error(good.substr(0, good.size() - cut), "truncated");
  }
  EXPECT_NO_THROW(parse(good.substr(0, data_begin + 40)));
}

TEST_F(Safetensors, ParseRejectsMetadataThatIsNotAMapOfStrings) {
  const std::string data = reference_data();
  for (const char* meta : {"[\"pt\"]", "\"pt\"", "{\"format\":1}", "{\"format\":null}",
                           "{\"format\":{\"a\":\"b\"}}"}) {
    SCOPED_TRACE(meta);
    expect_format_error(make_file(replaced(kHeader, "{\"format\":\"pt\"}", meta), data),
                        "__metadata__");
  }
}

// The entries must tile the data exactly, as the format's reference implementation
// requires (an entry begins where the previous one ends, and the last ends at the end of
// the file: InvalidOffset, MetadataIncompleteBuffer). Otherwise a header length shortened
// into the header's padding would parse with every tensor read one byte early.
TEST_F(Safetensors, ParseRequiresTheEntriesToTileTheDataExactly) {
  const std::string data = reference_data();
  const std::string padded = make_file(kHeader, data, 3);
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(padded[k]);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a header length shortened into its padding", le64(n - 1) + padded.substr(8)},
      {"bytes after the last tensor", reference_file() + std::string(8, '\0')},
      {"overlapping entries", make_file(replaced(kHeader, "[24,40]", "[8,24]"), data)},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    try {
      parse(bytes);
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kFormat) << e.what();
    }
  }
}

// nlohmann::json's lexer takes a NUL byte for the end of its input, so a header whose JSON
// is followed by '\0' and anything at all must be rejected before parsing (the reference
// implementation rejects trailing characters).
TEST_F(Safetensors, ParseRejectsBytesAfterTheJsonOfTheHeader) {
  const std::string data = reference_data();
  expect_format_error(make_file(kHeader + " x", data), "not valid JSON");
  const std::string with_nul = make_file(kHeader + std::string(1, '\0') + "garbage{", data);
  try {
    parse(with_nul);
    ADD_FAILURE() << "accepted a header with a NUL byte and garbage after its JSON";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFormat) << e.what();
  }
}

TEST_F(Safetensors, MetadataIsReadFromTheHeaderAloneOfAnySafetensorsFile) {
  // An F16 entry this library cannot load, and only the header of a file whose data was
  // cut short: the metadata of both reads.
  const std::string f16 = R"({"__metadata__":{"epoch":"3"},)"
                          R"("h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})";
  std::ofstream(path("f16.safetensors"), std::ios::binary) << make_file(f16, "abcd");
  EXPECT_EQ(load_safetensors_metadata(path("f16.safetensors")),
            (std::map<std::string, std::string>{{"epoch", "3"}}));
  const std::string whole = reference_file();
  std::ofstream(path("cut.safetensors"), std::ios::binary) << whole.substr(0, whole.size() - 5);
  EXPECT_EQ(load_safetensors_metadata(path("cut.safetensors")),
            (std::map<std::string, std::string>{{"format", "pt"}}));
  // The header itself must be whole and valid.
  const std::string header_cut = whole.substr(0, 8 + kHeader.size() / 2);
  std::ofstream(path("header_cut.safetensors"), std::ios::binary) << header_cut;
  for (const char* file : {"header_cut.safetensors"}) {
    try {
      load_safetensors_metadata(path(file));
      ADD_FAILURE() << file << " gave metadata";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kFormat) << e.what();
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
  std::ofstream(path("bad_meta.safetensors"), std::ios::binary)
      << make_file(R"({"__metadata__":{"epoch":3}})", "");
  try {
    load_safetensors_metadata(path("bad_meta.safetensors"));
    ADD_FAILURE() << "a number as metadata value was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFormat) << e.what();
    EXPECT_NE(std::string(e.what()).find("__metadata__[\"epoch\"]"), std::string::npos) << e.what();
  }
}

// A FIFO would block a reader forever and /dev/zero never ends: only regular files are
// read, for tensors and for metadata alike.
TEST_F(Safetensors, LoadRefusesFilesThatAreNotRegularFiles) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  const size_t fds_before = open_descriptors();
  for (const std::string& p : {path("fifo"), std::string("/dev/zero")}) {
    SCOPED_TRACE(p);
    for (int metadata_only = 0; metadata_only < 2; ++metadata_only) {
      try {
        if (metadata_only)
          load_safetensors_metadata(p);
        else
          load_safetensors(p);
        ADD_FAILURE() << "read " << p;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), Code::kIo) << e.what();
        EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
      }
    }
  }
  // Each refusal closed what it opened (they leaked one descriptor each).
  EXPECT_EQ(open_descriptors(), fds_before);
}

// A missing file and a directory (which std::ifstream opens on Linux, failing only when
// read) are both kIo errors.
TEST_F(Safetensors, LoadReportsIoForAMissingFileAndForADirectory) {
  try {
    load_safetensors(path("absent.safetensors"));
    ADD_FAILURE() << "loaded a file that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find("absent.safetensors"), std::string::npos) << e.what();
  }
  try {
    load_safetensors(dir_);
    ADD_FAILURE() << "loaded a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kIo) << e.what();
  }
}

}  // namespace
}  // namespace dp
