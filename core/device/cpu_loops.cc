#include "device/cpu_loops.h"

#include <cstring>

#include "device/element_math.h"

namespace dp::cpu_loops {

// Not under ThreadSanitizer: the load-time resolver of a cloned function runs before the
// sanitizer's runtime is ready, and crashes when instrumented.
#if defined(__x86_64__) && !defined(__clang__) && !defined(DP_NO_TARGET_CLONES) && \
    !defined(__SANITIZE_THREAD__)
#define DP_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DP_CLONES
#endif

DP_CLONES
void sum_middle(const float* x, float* out, int64_t outer, int64_t mid, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * mid * inner;
    float* oo = out + o * inner;
    if (inner == 1) {
      double acc = 0;  // a long sum: keep the rounding error small
      for (int64_t m = 0; m < mid; ++m) acc += xo[m];
      oo[0] = static_cast<float>(acc);
      continue;
    }
    std::memcpy(oo, xo, sizeof(float) * inner);
    for (int64_t m = 1; m < mid; ++m) {
      const float* row = xo + m * inner;
      for (int64_t i = 0; i < inner; ++i) oo[i] += row[i];
    }
  }
}

namespace {

// The loops behind binary_same_shape, one per aliasing case, so that each can promise
// the compiler what it needs to vectorise.
template <BinaryOp Op>
DP_CLONES void binary_distinct(const float* __restrict a, const float* __restrict b,
                               float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = elem::apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
DP_CLONES void binary_into_a(float* __restrict a, const float* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = elem::apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
DP_CLONES void binary_into_b(const float* __restrict a, float* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) b[i] = elem::apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
void binary_op(const float* a, const float* b, float* out, int64_t n) {
  if (a == b) {
    // x op x: every operand is the same array; the element is read before it is written.
    for (int64_t i = 0; i < n; ++i) out[i] = elem::apply_binary(Op, a[i], a[i]);
  } else if (out == a) {
    binary_into_a<Op>(out, b, n);
  } else if (out == b) {
    binary_into_b<Op>(a, out, n);
  } else {
    binary_distinct<Op>(a, b, out, n);
  }
}

}  // namespace

void binary_same_shape(BinaryOp op, const float* a, const float* b, float* out, int64_t n) {
  switch (op) {
    case BinaryOp::kAdd:
      return binary_op<BinaryOp::kAdd>(a, b, out, n);
    case BinaryOp::kSub:
      return binary_op<BinaryOp::kSub>(a, b, out, n);
    case BinaryOp::kMul:
      return binary_op<BinaryOp::kMul>(a, b, out, n);
    case BinaryOp::kDiv:
      return binary_op<BinaryOp::kDiv>(a, b, out, n);
  }
}

DP_CLONES
void sgd(float* w, const float* g, float* buf, int64_t n, const SgdParams& p) {
  const float lr = static_cast<float>(p.lr), wd = static_cast<float>(p.weight_decay);
  const float mom = static_cast<float>(p.momentum), damp = static_cast<float>(1.0 - p.dampening);
  if (!buf) {
    for (int64_t i = 0; i < n; ++i) w[i] -= lr * (g[i] + wd * w[i]);
  } else if (p.first_step) {
    for (int64_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * w[i];
      buf[i] = d;
      w[i] -= lr * (p.nesterov ? d + mom * d : d);
    }
  } else if (p.nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * w[i];
      buf[i] = mom * buf[i] + damp * d;
      w[i] -= lr * (d + mom * buf[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float b = mom * buf[i] + damp * (g[i] + wd * w[i]);
      buf[i] = b;
      w[i] -= lr * b;
    }
  }
}

DP_CLONES
void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamParams& p) {
  const elem::AdamScalars<float> a = elem::adam_scalars<float>(p);
  for (int64_t i = 0; i < n; ++i) elem::adam_update(w[i], g[i], m[i], v[i], a);
}

}  // namespace dp::cpu_loops
