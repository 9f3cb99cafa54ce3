// The one error type of the core. Every failure inside the core is a dp::Error carrying
// a code that maps one to one onto the C ABI's dp_result; capi/ turns it into a result
// and a thread-local message, so no exception crosses the ABI.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace dp {

// Values equal dp_result's (checked by static_assert in capi/).
enum class Code : int {
  kOk = 0,
  kInvalidArgument = 1,
  kOutOfRange = 2,
  kShapeMismatch = 3,
  kDtypeMismatch = 4,
  kDeviceMismatch = 5,
  kOutOfMemory = 6,
  kNotSupported = 7,
  kIo = 8,
  kFormat = 9,
  kState = 10,
  kBackend = 11,
  kCallback = 12,
  kInternal = 13,
};

class Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

}  // namespace dp

// DP_THROW(kInvalidArgument, "shape[" << i << "] = " << s << " is negative");
#define DP_THROW(code, stream_expr)                     \
  do {                                                  \
    std::ostringstream dp_msg_;                         \
    dp_msg_ << stream_expr;                             \
    throw ::dp::Error(::dp::Code::code, dp_msg_.str()); \
  } while (0)

#define DP_CHECK(cond, code, stream_expr)     \
  do {                                        \
    if (!(cond)) DP_THROW(code, stream_expr); \
  } while (0)
