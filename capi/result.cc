#include "capi/result.h"

#include <stdexcept>

namespace dp::capi {

static_assert(static_cast<int>(Code::kInvalidArgument) == DP_ERR_INVALID_ARGUMENT);
static_assert(static_cast<int>(Code::kOutOfRange) == DP_ERR_OUT_OF_RANGE);
static_assert(static_cast<int>(Code::kShapeMismatch) == DP_ERR_SHAPE_MISMATCH);
static_assert(static_cast<int>(Code::kDtypeMismatch) == DP_ERR_DTYPE_MISMATCH);
static_assert(static_cast<int>(Code::kDeviceMismatch) == DP_ERR_DEVICE_MISMATCH);
static_assert(static_cast<int>(Code::kOutOfMemory) == DP_ERR_OUT_OF_MEMORY);
static_assert(static_cast<int>(Code::kNotSupported) == DP_ERR_NOT_SUPPORTED);
static_assert(static_cast<int>(Code::kIo) == DP_ERR_IO);
static_assert(static_cast<int>(Code::kFormat) == DP_ERR_FORMAT);
static_assert(static_cast<int>(Code::kState) == DP_ERR_STATE);
static_assert(static_cast<int>(Code::kBackend) == DP_ERR_BACKEND);
static_assert(static_cast<int>(Code::kCallback) == DP_ERR_CALLBACK);
static_assert(static_cast<int>(Code::kInternal) == DP_ERR_INTERNAL);

namespace {
std::string& last_error() {
  thread_local std::string message;
  return message;
}
thread_local uint64_t errors_recorded = 0;
}  // namespace

uint64_t error_count() {
  return errors_recorded;
}

dp_result set_error(dp_result code, const std::string& message) {
  ++errors_recorded;
  try {
    last_error() = message;
  } catch (...) {
    // No memory even for the message: keep the code.
  }
  return code;
}

// The message is moved aside, not copied, and moved back: a pointer dp_last_error() gave
// before the scope stays valid (and nothing here allocates or throws).
ErrorRecordScope::ErrorRecordScope() noexcept : count_(errors_recorded) {
  message_.swap(last_error());
}

ErrorRecordScope::~ErrorRecordScope() {
  errors_recorded = count_;
  last_error().swap(message_);
}

dp_result translate_current_exception() {
  try {
    throw;
  } catch (const Error& e) {
    return set_error(static_cast<dp_result>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return set_error(DP_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::length_error& e) {
    // A container asked for more than it can hold: an allocation too large to make.
    return set_error(DP_ERR_OUT_OF_MEMORY, std::string("out of memory: ") + e.what());
  } catch (const std::exception& e) {
    return set_error(DP_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return set_error(DP_ERR_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace dp::capi

extern "C" {

const char* dp_last_error(void) {
  return dp::capi::last_error().c_str();
}

const char* dp_result_string(dp_result result) {
  switch (result) {
    case DP_OK:
      return "ok";
    case DP_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case DP_ERR_OUT_OF_RANGE:
      return "out of range";
    case DP_ERR_SHAPE_MISMATCH:
      return "shape mismatch";
    case DP_ERR_DTYPE_MISMATCH:
      return "dtype mismatch";
    case DP_ERR_DEVICE_MISMATCH:
      return "device mismatch";
    case DP_ERR_OUT_OF_MEMORY:
      return "out of memory";
    case DP_ERR_NOT_SUPPORTED:
      return "not supported";
    case DP_ERR_IO:
      return "I/O error";
    case DP_ERR_FORMAT:
      return "corrupt or incompatible data";
    case DP_ERR_STATE:
      return "invalid state";
    case DP_ERR_BACKEND:
      return "device backend error";
    case DP_ERR_CALLBACK:
      return "callback failed";
    case DP_ERR_INTERNAL:
      return "internal error";
    default:
      return "unknown result code";
  }
}

uint32_t dp_version_number(void) {
  return DP_VERSION_NUMBER;
}

const char* dp_version_string(void) {
#define DP_STR2(x) #x
#define DP_STR(x) DP_STR2(x)
  return DP_STR(DP_VERSION_MAJOR) "." DP_STR(DP_VERSION_MINOR) "." DP_STR(DP_VERSION_PATCH);
}

}  // extern "C"
