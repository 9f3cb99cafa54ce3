// Turning core exceptions into dp_result values and the thread-local message. Every
// extern "C" function runs its body through guard(), so no exception crosses the ABI.
#pragma once

#include <cxxabi.h>

#include <cstdint>
#include <exception>
#include <new>
#include <string>

#include "dataparallel/dataparallel.h"
#include "error.h"

namespace dp::capi {

// Records the message for dp_last_error() on this thread and returns the code.
dp_result set_error(dp_result code, const std::string& message);
// How many errors this thread has recorded so far: a change tells that dp_last_error()
// is new since an earlier reading.
uint64_t error_count();
// Sets this thread's error record (count and message) aside and puts it back when it goes.
// A custom forward runs inside one: another forward run on the same thread while it waits
// in a library call (Worker::wait_helping, or a forward of a module on its own device)
// then leaves the record, and the message's storage, as it found them.
class ErrorRecordScope {
 public:
  ErrorRecordScope() noexcept;
  ~ErrorRecordScope();
  ErrorRecordScope(const ErrorRecordScope&) = delete;
  ErrorRecordScope& operator=(const ErrorRecordScope&) = delete;

 private:
  uint64_t count_;
  std::string message_;
};
// Translates the exception being handled (call only inside a catch block).
dp_result translate_current_exception();

// Every exception becomes a dp_result, except a thread's forced unwind (pthread_exit,
// as Python at exit ends a thread inside a nested library call), which must go on: glibc
// aborts the process when a catch keeps it. So this is not noexcept.
template <class F>
dp_result guard(F&& f) {
  try {
    f();
    return DP_OK;
  } catch (abi::__forced_unwind&) {
    throw;
  } catch (...) {
    return translate_current_exception();
  }
}

}  // namespace dp::capi
