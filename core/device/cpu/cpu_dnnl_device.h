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
  // re-pointed at each call's data (used by hot small operations: matmul), with the
  // argument list oneDNN's C execute takes (its handles stay those of these memories).
  // A handful of arguments: a flat list searched in order costs less than a hash table.
  std::vector<std::pair<int, memory>> args;
  std::vector<dnnl_exec_arg_t> exec_args;
};

// Key of the primitive cache: the operation and every size and flag that shapes it, as
// 64-bit words kept in the key itself (room for the longest, the conv + ReLU + pool
// block's). Building one and looking it up allocates and copies nothing: a 1x1x1 matmul
// call is about 8,000 instructions, and a key built in a heap string took 600 of them.
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
  // The key's bytes and one more (a reorder's name, from its primitive's key).
  std::string str(char suffix) const {
    std::string out;
    out.reserve(view().size() + 1);
    out.append(view()).push_back(suffix);
    return out;
  }

 private:
  static constexpr size_t kWords = 64;
  [[noreturn]] static void too_long() {
    DP_THROW(kInternal, "oneDNN primitive cache key longer than " << kWords << " words");
  }
  int64_t words_[kWords];
  size_t size_ = 0;
};

// The cache's hash, of a Key's bytes or of the string the cache keeps of them, alike (both
// a whole number of words); looks a Key up without making a string of it. Each word is
// mixed with its position and scrambled on its own (the words' products do not wait for
// one another: a chain of multiplications over a matmul key's 19 words had been the
// hottest spot of the call), then summed in two sums that keep the additions' chains short.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    constexpr uint64_t kOdd = 0x9e3779b97f4a7c15ull, kMul = 0xff51afd7ed558ccdull;
    auto mixed = [&](size_t i) {  // word i with its position, scrambled
      uint64_t w;
      std::memcpy(&w, s.data() + i * sizeof w, sizeof w);
      uint64_t x = (w ^ (i + 1) * kOdd) * kMul;
      x ^= x >> 32;
      return x * kOdd;
    };
    const size_t words = s.size() / sizeof(uint64_t);
    uint64_t even = s.size(), odd = 0;
    size_t i = 0;
    for (; i + 1 < words; i += 2) {
      even += mixed(i);
      odd += mixed(i + 1);
    }
    if (i < words) even += mixed(i);
    uint64_t h = even ^ (odd << 29 | odd >> 35);
    h = (h ^ h >> 33) * kMul;  // the finalizer of MurmurHash3
    h = (h ^ h >> 33) * 0xc4ceb9fe1a85ec53ull;
    return static_cast<size_t>(h ^ h >> 33);
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
    for (auto& [bound, m] : c.args) {
      if (bound == id) {
        m.set_data_handle(mut(p));
        return;
      }
    }
    memory m(make_md(), eng, mut(p));
    c.exec_args.reserve(c.args.size() + 1);  // then neither push_back below can throw
    c.args.reserve(c.args.size() + 1);
    c.exec_args.push_back({id, m.get()});
    c.args.emplace_back(id, std::move(m));
  }
  // Runs c on the arguments bound with bind(), through oneDNN's C execute: its C++ one
  // copies a map of them into a new vector on every call.
  void run_bound(Cached& c) {
    if (c.scratch_bytes)
      bind(c, DNNL_ARG_SCRATCHPAD, scratchpad(c.scratch_bytes), [&] { return c.scratch_md; });
    dnnl::error::wrap_c_api(
        dnnl_primitive_execute(c.prim.get(), strm.get(), static_cast<int>(c.exec_args.size()),
                               c.exec_args.data()),
        "could not execute a primitive");
    strm.wait();
  }

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
