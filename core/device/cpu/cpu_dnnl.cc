// The oneDNN kernels of the CPU backend other than convolutions and pooling: the
// per-device state and its threads, elementwise and binary ops, sums, matmul, softmax
// and batch norm (cpu_dnnl.h says what each takes).
#include <bit>
#include <cstring>
#include <string>

#include "device/cpu/cpu_dnnl_device.h"

// From GNU OpenMP (libgomp), which Debian's oneDNN uses for its threads. Declared here
// rather than through <omp.h>, which not every compiler of this project ships.
extern "C" void omp_set_num_threads(int);
extern "C" int omp_get_max_threads(void);

namespace dp::dnnl_cpu {

static int64_t float_bits(float v) {
  return static_cast<int64_t>(std::bit_cast<int32_t>(v));
}

std::unique_ptr<DnnlDevice, void (*)(DnnlDevice*)> make_device() {
  omp_set_num_threads(1);
  DnnlDevice* d = nullptr;
  guarded("engine creation", [&] { d = new DnnlDevice(); });
  return {d, [](DnnlDevice* p) { delete p; }};
}

int enter_single_thread() {
  const int previous = omp_get_max_threads();
  if (previous != 1) omp_set_num_threads(1);
  return previous;
}

void leave_single_thread(int previous) {
  if (previous != 1) omp_set_num_threads(previous);
}

size_t cache_size(const DnnlDevice& d) {
  return d.cache.size();
}

static algorithm binary_alg(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return algorithm::binary_add;
    case BinaryOp::kSub:
      return algorithm::binary_sub;
    case BinaryOp::kMul:
      return algorithm::binary_mul;
    case BinaryOp::kDiv:
      return algorithm::binary_div;
  }
  return algorithm::binary_add;
}

// b right-aligned to out's rank.
static memory::dims aligned_dims(const KView& v, int ndim) {
  memory::dims d(ndim > 0 ? ndim : 1, 1);
  for (int i = 0; i < v.ndim; ++i) d[ndim - v.ndim + i] = v.shape[i];
  return d;
}

bool binary(DnnlDevice& d, BinaryOp op, const KView& a_in, const KView& b_in, const KView& out) {
  const KView* a = &a_in;
  const KView* b = &b_in;
  if (a->numel() != out.numel()) {
    // oneDNN broadcasts only its second source; swap when the operation allows it.
    if ((op == BinaryOp::kAdd || op == BinaryOp::kMul) && b->numel() == out.numel()) {
      std::swap(a, b);
    } else {
      return false;
    }
  }
  if (out.numel() == 0) return true;
  const memory::dims od = dims_of(out);
  const memory::dims bd = aligned_dims(*b, out.ndim);
  KView bview = *b;
  bview.ndim = static_cast<int>(bd.size());
  for (size_t i = 0; i < bd.size(); ++i) bview.shape[i] = bd[i];
  Key key('b');
  key.add(static_cast<int64_t>(op)).add(out).add(bview);
  guarded("binary", [&] {
    Cached& c = d.get<dnnl::binary>(key, [&](const dnnl::primitive_attr& attr) {
      return dnnl::binary::primitive_desc(
          dnnl::binary::desc(binary_alg(op), md_of(od), md_of(bd), md_of(od)), attr, d.eng);
    });
    d.run(c, {{DNNL_ARG_SRC_0, d.mem(md_of(od), a->data)},
              {DNNL_ARG_SRC_1, d.mem(md_of(bd), b->data)},
              {DNNL_ARG_DST, d.mem(md_of(od), out.data)}});
  });
  return true;
}

static bool eltwise(DnnlDevice& d, algorithm alg, float alpha, float beta, const KView& x,
                    const KView& out) {
  if (out.numel() == 0) return true;
  const memory::dims flat{out.numel()};
  Key key('e');
  key.add(static_cast<int64_t>(alg)).add(out.numel());
  key.add(float_bits(alpha));
  key.add(float_bits(beta));
  guarded("eltwise", [&] {
    Cached& c = d.get<dnnl::eltwise_forward>(key, [&](const dnnl::primitive_attr& attr) {
      return dnnl::eltwise_forward::primitive_desc(
          dnnl::eltwise_forward::desc(prop_kind::forward_training, alg, md_of(flat), alpha, beta),
          attr, d.eng);
    });
    d.run(c, {{DNNL_ARG_SRC, d.mem(md_of(flat), x.data)},
              {DNNL_ARG_DST, d.mem(md_of(flat), out.data)}});
  });
  return true;
}

static algorithm unary_alg(UnaryOp op) {
  switch (op) {
    case UnaryOp::kRelu:
      return algorithm::eltwise_relu;
    case UnaryOp::kGelu:
      return algorithm::eltwise_gelu_erf;
    case UnaryOp::kTanh:
      return algorithm::eltwise_tanh_use_dst_for_bwd;
    case UnaryOp::kSigmoid:
      return algorithm::eltwise_logistic_use_dst_for_bwd;
    case UnaryOp::kExp:
      return algorithm::eltwise_exp_use_dst_for_bwd;
    case UnaryOp::kLog:
      return algorithm::eltwise_log;
  }
  return algorithm::eltwise_relu;
}

static bool uses_dst(UnaryOp op) {
  return op == UnaryOp::kTanh || op == UnaryOp::kSigmoid || op == UnaryOp::kExp;
}

bool affine(DnnlDevice& d, const KView& x, const KView& out, double alpha, double beta) {
  return eltwise(d, algorithm::eltwise_linear, static_cast<float>(alpha), static_cast<float>(beta),
                 x, out);
}

bool unary(DnnlDevice& d, UnaryOp op, const KView& x, const KView& out) {
  return eltwise(d, unary_alg(op), 0.f, 0.f, x, out);
}

bool unary_backward(DnnlDevice& d, UnaryOp op, const KView& gy, const KView& saved,
                    const KView& gx) {
  if (gx.numel() == 0) return true;
  const memory::dims flat{gx.numel()};
  const algorithm alg = unary_alg(op);
  Key key('E');
  key.add(static_cast<int64_t>(alg)).add(gx.numel());
  guarded("eltwise backward", [&] {
    Cached& c = d.get<dnnl::eltwise_backward>(key, [&](const dnnl::primitive_attr& attr) {
      auto hint = dnnl::eltwise_forward::primitive_desc(
          dnnl::eltwise_forward::desc(prop_kind::forward_training, alg, md_of(flat), 0.f), d.eng);
      return dnnl::eltwise_backward::primitive_desc(
          dnnl::eltwise_backward::desc(alg, md_of(flat), md_of(flat), 0.f), attr, d.eng, hint);
    });
    d.run(c, {{DNNL_ARG_DIFF_DST, d.mem(md_of(flat), gy.data)},
              {uses_dst(op) ? DNNL_ARG_DST : DNNL_ARG_SRC, d.mem(md_of(flat), saved.data)},
              {DNNL_ARG_DIFF_SRC, d.mem(md_of(flat), gx.data)}});
  });
  return true;
}

bool reduce_sum(DnnlDevice& d, const KView& x, const KView& out) {
  if (x.numel() == 0) return false;  // the reference writes the zeros
  if (x.numel() == out.numel()) {
    if (x.data != out.data) std::memcpy(out.data, x.data, x.numel() * sizeof(float));
    return true;
  }
  Key key('r');
  key.add(x).add(out);
  guarded("reduction", [&] {
    Cached& c = d.get<dnnl::reduction>(key, [&](const dnnl::primitive_attr& attr) {
      return dnnl::reduction::primitive_desc(
          dnnl::reduction::desc(algorithm::reduction_sum, md_of(x), md_of(out), 0.f, 0.f), attr,
          d.eng);
    });
    d.run(c, {{DNNL_ARG_SRC, d.mem(x)}, {DNNL_ARG_DST, d.mem(out)}});
  });
  return true;
}

// A [rows, cols] matrix, or its batched form, stored transposed when `trans`.
static memory::desc matrix_md(const KView& v, bool trans, bool batched) {
  const bool has_batch = v.ndim == 3;
  const int64_t B = has_batch ? v.shape[0] : 1;
  const int64_t r = v.shape[v.ndim - 2], c = v.shape[v.ndim - 1];
  // Stored [r, c]; logical dims are [c, r] when transposed.
  memory::dims dims = trans ? memory::dims{c, r} : memory::dims{r, c};
  memory::dims strides = trans ? memory::dims{1, c} : memory::dims{c, 1};
  if (batched) {
    dims.insert(dims.begin(), B);
    strides.insert(strides.begin(), r * c);
  }
  return memory::desc(dims, dt_of(v.dtype), strides);
}

bool bf16_forced_fp32() {
  static const bool forced = [] {
    const char* env = std::getenv("DP_CPU_BF16");
    return env && std::string(env) == "fp32";
  }();
  return forced;
}

bool bf16_native() {
  static const bool native = [] {
    if (bf16_forced_fp32()) return false;
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & bf16) == bf16;  // the ISA values are feature masks; AMX includes it
  }();
  return native;
}

bool matmul(DnnlDevice& d, const KView& a, const KView& b, const KView* bias, const KView& out,
            const MatmulParams& p) {
  if (out.numel() == 0) return true;
  const bool batched = out.ndim == 3;
  const int64_t K = p.trans_a ? a.shape[a.ndim - 2] : a.shape[a.ndim - 1];
  if (K == 0) return false;  // the reference writes bias (or zeros)
  Key key('m');
  key.add(a).add(b).add(out).add(bias != nullptr).add(p.trans_a).add(p.trans_b);
  key.add(p.accumulate).add(p.relu);
  // The operands' dtypes too: bfloat16 a and b may make a float32 out.
  key.add(static_cast<int64_t>(a.dtype))
      .add(static_cast<int64_t>(b.dtype))
      .add(static_cast<int64_t>(out.dtype))
      .add(static_cast<int64_t>(bias ? bias->dtype : out.dtype));
  // Descriptors are built only on a cache miss: the key fixes them. bfloat16 views (on a
  // CPU with native bfloat16) make a bfloat16 primitive: float32 sums, bias and post-ops,
  // one rounding of the result.
  const dt bias_type = bias ? dt_of(bias->dtype) : dt::f32;
  auto amd = [&] { return matrix_md(a, p.trans_a, batched); };
  auto bmd = [&] { return matrix_md(b, p.trans_b, batched); };
  auto omd = [&] { return md_of(out); };
  auto bias_md = [&] {
    const int64_t N = out.shape[out.ndim - 1];
    return batched ? md_of(memory::dims{1, 1, N}, bias_type) : md_of(memory::dims{1, N}, bias_type);
  };
  guarded("matmul", [&] {
    Cached& c = d.get<dnnl::matmul>(key, [&](dnnl::primitive_attr attr) {
      dnnl::post_ops ops;
      if (p.accumulate) ops.append_sum(1.f);
      if (p.relu) ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(ops);
      auto desc = bias ? dnnl::matmul::desc(amd(), bmd(), bias_md(), omd())
                       : dnnl::matmul::desc(amd(), bmd(), omd());
      return dnnl::matmul::primitive_desc(desc, attr, d.eng);
    });
    d.bind(c, DNNL_ARG_SRC, a.data, amd);
    d.bind(c, DNNL_ARG_WEIGHTS, b.data, bmd);
    d.bind(c, DNNL_ARG_DST, out.data, omd);
    if (bias) d.bind(c, DNNL_ARG_BIAS, bias->data, bias_md);
    d.run_bound(c);
  });
  return true;
}

bool softmax(DnnlDevice& d, const KView& x, int dim, bool log, const KView& out) {
  if (out.numel() == 0) return true;
  if (x.ndim == 0) return false;
  Key key('s');
  key.add(x).add(dim).add(log);
  const algorithm alg = log ? algorithm::softmax_log : algorithm::softmax_accurate;
  guarded("softmax", [&] {
    Cached& c = d.get<dnnl::softmax_v2_forward>(key, [&](const dnnl::primitive_attr& attr) {
      return dnnl::softmax_v2_forward::primitive_desc(
          dnnl::softmax_v2_forward::desc(prop_kind::forward_training, alg, md_of(x), md_of(out),
                                         dim),
          attr, d.eng);
    });
    d.run(c, {{DNNL_ARG_SRC, d.mem(x)}, {DNNL_ARG_DST, d.mem(out)}});
  });
  return true;
}

bool softmax_backward(DnnlDevice& d, const KView& gy, const KView& y, int dim, bool log,
                      const KView& gx) {
  if (gx.numel() == 0) return true;
  if (y.ndim == 0) return false;
  Key key('S');
  key.add(y).add(dim).add(log);
  const algorithm alg = log ? algorithm::softmax_log : algorithm::softmax_accurate;
  guarded("softmax backward", [&] {
    Cached& c = d.get<dnnl::softmax_v2_backward>(key, [&](const dnnl::primitive_attr& attr) {
      auto hint = dnnl::softmax_v2_forward::primitive_desc(
          dnnl::softmax_v2_forward::desc(prop_kind::forward_training, alg, md_of(y), md_of(y), dim),
          d.eng);
      return dnnl::softmax_v2_backward::primitive_desc(
          dnnl::softmax_v2_backward::desc(alg, md_of(gx), md_of(gy), md_of(y), dim), attr, d.eng,
          hint);
    });
    d.run(
        c,
        {{DNNL_ARG_DIFF_DST, d.mem(gy)}, {DNNL_ARG_DST, d.mem(y)}, {DNNL_ARG_DIFF_SRC, d.mem(gx)}});
  });
  return true;
}

static dnnl::normalization_flags bn_flags(bool global_stats) {
  auto f = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  return global_stats ? f | dnnl::normalization_flags::use_global_stats : f;
}

static dnnl::batch_normalization_forward::primitive_desc bn_fwd_pd(
    DnnlDevice& d, const KView& x, double eps, bool training, const dnnl::primitive_attr& attr) {
  return dnnl::batch_normalization_forward::primitive_desc(
      dnnl::batch_normalization_forward::desc(
          training ? prop_kind::forward_training : prop_kind::forward_inference, md_of(x),
          static_cast<float>(eps), bn_flags(!training)),
      attr, d.eng);
}

bool batch_norm(DnnlDevice& d, const KView& x, const KView& gamma, const KView& beta,
                const KView& mean, const KView& var, const KView& y, double eps, bool training) {
  if (x.numel() == 0) return false;
  Key key('n');
  key.add(x).add(training);
  const float feps = static_cast<float>(eps);
  key.add(float_bits(feps));
  guarded("batch normalization", [&] {
    Cached& c = d.get<dnnl::batch_normalization_forward>(
        key,
        [&](const dnnl::primitive_attr& attr) { return bn_fwd_pd(d, x, eps, training, attr); });
    d.run(c, {{DNNL_ARG_SRC, d.mem(x)},
              {DNNL_ARG_DST, d.mem(y)},
              {DNNL_ARG_SCALE, d.mem(gamma)},
              {DNNL_ARG_SHIFT, d.mem(beta)},
              {DNNL_ARG_MEAN, d.mem(mean)},
              {DNNL_ARG_VARIANCE, d.mem(var)}});
  });
  return true;
}

bool batch_norm_backward(DnnlDevice& d, const KView& gy, const KView& x, const KView& gamma,
                         const KView& mean, const KView& var, const KView& gx, const KView& ggamma,
                         const KView& gbeta, double eps) {
  if (x.numel() == 0) return false;
  Key key('N');
  key.add(x);
  const float feps = static_cast<float>(eps);
  key.add(float_bits(feps));
  guarded("batch normalization backward", [&] {
    Cached& c =
        d.get<dnnl::batch_normalization_backward>(key, [&](const dnnl::primitive_attr& attr) {
          auto hint = bn_fwd_pd(d, x, eps, true, dnnl::primitive_attr());
          return dnnl::batch_normalization_backward::primitive_desc(
              dnnl::batch_normalization_backward::desc(prop_kind::backward, md_of(gx), md_of(x),
                                                       feps, bn_flags(false)),
              attr, d.eng, hint);
        });
    d.run(c, {{DNNL_ARG_SRC, d.mem(x)},
              {DNNL_ARG_MEAN, d.mem(mean)},
              {DNNL_ARG_VARIANCE, d.mem(var)},
              {DNNL_ARG_DIFF_DST, d.mem(gy)},
              {DNNL_ARG_SCALE, d.mem(gamma)},
              // oneDNN 2.6 wants a shift argument here although the gradients do not read
              // it; gamma has the right shape and is only read.
              {DNNL_ARG_SHIFT, d.mem(gamma)},
              {DNNL_ARG_DIFF_SRC, d.mem(gx)},
              {DNNL_ARG_DIFF_SCALE, d.mem(ggamma)},
              {DNNL_ARG_DIFF_SHIFT, d.mem(gbeta)}});
  });
  return true;
}

}  // namespace dp::dnnl_cpu
