#include "device/trace.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

namespace dp::trace {

namespace detail {
std::atomic<bool> g_on{false};
}  // namespace detail

namespace {

struct Event {
  const char* name;
  int64_t arg;
  double begin, end;
};

// One per thread that recorded anything; owned by the registry so that the events of a
// thread that has ended are still written.
struct ThreadLog {
  int tid = 0;
  std::string name;
  std::mutex mu;  // the owner appends; stop() reads
  std::vector<Event> events;
};

struct Registry {
  std::mutex mu;
  std::string path;
  bool exit_hook = false;
  std::vector<std::shared_ptr<ThreadLog>> logs;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may record during exit
  return *r;
}

// The calling thread's name for the trace: a worker's device, else "caller".
std::string& thread_name() {
  thread_local std::string name = "caller";
  return name;
}

// The calling thread's log, created (and registered) by its first span.
std::shared_ptr<ThreadLog>& thread_log_slot() {
  thread_local std::shared_ptr<ThreadLog> log;
  return log;
}

ThreadLog& this_thread_log() {
  std::shared_ptr<ThreadLog>& log = thread_log_slot();
  if (!log) {
    log = std::make_shared<ThreadLog>();
    log->name = thread_name();
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    log->tid = static_cast<int>(r.logs.size()) + 1;
    r.logs.push_back(log);
  }
  return *log;
}

const auto g_epoch = std::chrono::steady_clock::now();

void write_at_exit() {
  (void)stop();
}

}  // namespace

namespace detail {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - g_epoch)
      .count();
}

void record(const char* name, int64_t arg, double begin_us, double end_us) {
  ThreadLog& log = this_thread_log();
  std::lock_guard<std::mutex> lock(log.mu);
  log.events.push_back({name, arg, begin_us, end_us});
}

}  // namespace detail

void start(const std::string& path) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.path = path;
  if (!r.exit_hook) {
    r.exit_hook = true;
    std::atexit(write_at_exit);
  }
  detail::g_on.store(true, std::memory_order_relaxed);
}

bool stop() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!detail::g_on.exchange(false)) return false;
  nlohmann::json events = nlohmann::json::array();
  for (const auto& log : r.logs) {
    std::lock_guard<std::mutex> log_lock(log->mu);
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", log->tid},
                      {"args", {{"name", log->name}}}});
    for (const Event& e : log->events) {
      nlohmann::json j = {{"name", e.name},  {"ph", "X"},     {"pid", 1},
                          {"tid", log->tid}, {"ts", e.begin}, {"dur", e.end - e.begin}};
      if (e.arg >= 0) j["args"] = {{"i", e.arg}};
      events.push_back(std::move(j));
    }
    log->events.clear();
  }
  std::ofstream out(r.path);
  out << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}}.dump()
      << "\n";
  return static_cast<bool>(out);
}

void name_thread(const std::string& name) {
  thread_name() = name;
  if (const auto& log = thread_log_slot()) {
    std::lock_guard<std::mutex> lock(log->mu);
    log->name = name;
  }
}

}  // namespace dp::trace
