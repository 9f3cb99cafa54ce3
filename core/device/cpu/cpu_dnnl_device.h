// What the oneDNN kernels of the CPU backend share (cpu_dnnl.cc: elementwise, matmul,
// softmax, batch norm; cpu_dnnl_conv.cc: convolutions, pooling and the conv + ReLU + pool
// block): the per-device state DnnlDevice with its primitive cache, the cache key, and
// descriptors of plain row-major views. Private to those two files.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device/cpu/cpu_dnnl.h"
#include "error.h"

namespace dp::dnnl_cpu {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using tag = memory::format_tag;
using dt = memory::data_type;

// A primitive with what executing it needs to know.
struct Cached {
  dnnl::primitive prim;
  dnnl::primitive_desc pd;
  memory::desc scratch_md;
  memory::desc workspace_md;
  size_t scratch_bytes = 0;
  size_t workspace_bytes = 0;
  // Argument memories of the primitive's fixed descriptors, made on first use and
  // re-pointed at each call's data (used by hot small operations: matmul).
  std::unordered_map<int, memory> args;
};

// Key of the primitive cache: the operation and every size and flag that shapes it, as
// 64-bit words kept in the key itself (room for the longest, the conv + ReLU + pool
// block's). Building one and looking it up allocates and copies nothing: a small matmul's
// whole call costs about a microsecond, and a key in a heap string, hashed bytewise, was a
// tenth of it.
class Key {
 public:
  explicit Key(char op) { add(op); }
  Key& add(int64_t v) {
    if (size_ == kWords) too_long();
    words_[size_++] = v;
    return *this;
  }
  Key& add(const KView& v) {
    add(v.ndim);
    for (int i = 0; i < v.ndim; ++i) add(v.shape[i]);
    return *this;
  }
  // The words' bytes, as the cache stores them.
  std::string_view view() const {
    return {reinterpret_cast<const char*>(words_), size_ * sizeof(int64_t)};
  }
  std::string str() const { return std::string(view()); }

 private:
  static constexpr size_t kWords = 64;
  [[noreturn]] static void too_long() {
    DP_THROW(kInternal, "oneDNN primitive cache key longer than " << kWords << " words");
  }
  int64_t words_[kWords];
  size_t size_ = 0;
};

// The cache's hash, of a Key's bytes (a whole number of words) or of the string the cache
// keeps of them, alike; looks a Key up without making a string of it.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
    for (size_t i = 0; i + sizeof(uint64_t) <= s.size(); i += sizeof(uint64_t)) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, sizeof w);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    for (size_t i = s.size() / sizeof(uint64_t) * sizeof(uint64_t); i < s.size(); ++i) {
      h = (h ^ static_cast<unsigned char>(s[i])) * 0xff51afd7ed558ccdull;
    }
    return static_cast<size_t>(h);
  }
};

inline memory::dims dims_of(const KView& v) {
  if (v.ndim == 0) return {1};
  return memory::dims(v.shape, v.shape + v.ndim);
}

inline memory::dims row_major_strides(const memory::dims& d) {
  memory::dims s(d.size());
  int64_t acc = 1;
  for (size_t i = d.size(); i-- > 0;) {
    s[i] = acc;
    acc *= d[i];
  }
  return s;
}

// oneDNN's type of a float32 or bfloat16 view (the only dtypes these kernels take).
inline dt dt_of(DType t) {
  return t == DType::kBFloat16 ? dt::bf16 : dt::f32;
}

inline memory::desc md_of(const memory::dims& d, dt type = dt::f32) {
  return memory::desc(d, type, row_major_strides(d));
}
inline memory::desc md_of(const KView& v) {
  return md_of(dims_of(v), dt_of(v.dtype));
}

inline void* mut(const void* p) {
  return const_cast<void*>(p);
}

struct DnnlDevice {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  std::unordered_map<std::string, Cached, KeyHash, std::equal_to<>> cache;
  void* scratch = nullptr;
  size_t scratch_size = 0;

  ~DnnlDevice() {
    std::free(scratch);
    for (void* p : temps) std::free(p);
  }

  void* scratchpad(size_t bytes) {
    if (bytes > scratch_size) {
      std::free(scratch);
      scratch = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      DP_CHECK(scratch != nullptr, kOutOfMemory,
               "oneDNN scratchpad of " << bytes << " bytes could not be allocated");
      scratch_size = bytes;
    }
    return scratch;
  }

  // Looks the key up; on a miss builds the primitive with make(attr) -> primitive_desc.
  template <class Prim, class Make>
  Cached& get(const Key& key, Make&& make) {
    using PD = typename Prim::primitive_desc;
    auto it = cache.find(key.view());
    if (it != cache.end()) return it->second;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    PD pd = make(attr);
    Cached c;
    c.prim = Prim(pd);
    c.pd = pd;
    c.scratch_md = pd.scratchpad_desc();
    c.scratch_bytes = c.scratch_md.get_size();
    c.workspace_md = pd.workspace_desc();
    c.workspace_bytes = c.workspace_md.get_size();
    return cache.emplace(key.str(), std::move(c)).first->second;
  }

  void run(Cached& c, std::unordered_map<int, memory>&& args) {
    if (c.scratch_bytes) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(c.scratch_md, eng, scratchpad(c.scratch_bytes)));
    }
    c.prim.execute(strm, args);
    strm.wait();
  }

  memory mem(const memory::desc& md, const void* p) { return memory(md, eng, mut(p)); }

  // c's argument `id` pointed at p; make_md() gives its descriptor the first time.
  template <class MakeMd>
  void bind(Cached& c, int id, const void* p, MakeMd&& make_md) {
    auto it = c.args.find(id);
    if (it == c.args.end()) {
      c.args.emplace(id, memory(make_md(), eng, mut(p)));
    } else {
      it->second.set_data_handle(mut(p));
    }
  }
  // Runs c on the arguments bound with bind().
  void run_bound(Cached& c) {
    if (c.scratch_bytes)
      bind(c, DNNL_ARG_SCRATCHPAD, scratchpad(c.scratch_bytes), [&] { return c.scratch_md; });
    // oneDNN's C call with the arguments on the stack: its C++ execute() copies the map
    // into a new vector on every call.
    dnnl_exec_arg_t args[kMaxBoundArgs];
    int n = 0;
    for (auto& [id, m] : c.args) {
      DP_CHECK(n < kMaxBoundArgs, kInternal,
               "a oneDNN primitive bound more than " << kMaxBoundArgs << " arguments");
      args[n++] = {id, m.get()};
    }
    dnnl::error::wrap_c_api(dnnl_primitive_execute(c.prim.get(), strm.get(), n, args),
                            "could not execute a primitive");
    strm.wait();
  }
  static constexpr int kMaxBoundArgs = 8;

  // Scratch buffers for tensors in a primitive's preferred (blocked) format, by slot.
  std::vector<void*> temps;
  std::vector<size_t> temp_sizes;
  std::unordered_map<std::string, dnnl::reorder> reorders;

  void* temp(size_t slot, size_t bytes) {
    if (temps.size() <= slot) {
      temps.resize(slot + 1, nullptr);
      temp_sizes.resize(slot + 1, 0);
    }
    if (temp_sizes[slot] < bytes) {
      std::free(temps[slot]);
      temps[slot] = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      temp_sizes[slot] = temps[slot] ? bytes : 0;
      DP_CHECK(temps[slot] != nullptr, kOutOfMemory,
               "oneDNN temporary of " << bytes << " bytes could not be allocated");
    }
    return temps[slot];
  }

  void reorder(const std::string& key, const memory& from, const memory& to) {
    auto it = reorders.find(key);
    if (it == reorders.end()) it = reorders.emplace(key, dnnl::reorder(from, to)).first;
    it->second.execute(strm, const_cast<memory&>(from), const_cast<memory&>(to));
  }

  // `v` in the format `want`: v itself when it already is, else a reordered copy in a
  // temporary slot. `key` names the reorder for the cache.
  memory to_format(const memory::desc& want, const KView& v, size_t slot, const std::string& key) {
    const memory plain = mem(v);
    if (want == plain.get_desc()) return plain;
    memory m(want, eng, temp(slot, want.get_size()));
    reorder(key, plain, m);
    return m;
  }

  // Memory in the format `want` to compute into: v itself when it is already in that
  // format, else a temporary slot; finish_output copies the temporary into v.
  memory output(const memory::desc& want, const KView& v, size_t slot) {
    if (want == md_of(v)) return mem(v);
    return memory(want, eng, temp(slot, want.get_size()));
  }
  void finish_output(const memory& m, const KView& v, const std::string& key) {
    if (m.get_data_handle() == v.data) return;
    reorder(key, m, mem(v));
  }
  memory mem(const KView& v) { return mem(md_of(v), v.data); }
};

// oneDNN reports failures as dnnl::error; the core speaks dp::Error.
template <class F>
void guarded(const char* op, F&& f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    DP_THROW(kBackend, "oneDNN " << op << " failed: " << e.what() << " (status "
                                 << static_cast<int>(e.status) << ")");
  }
}

}  // namespace dp::dnnl_cpu
