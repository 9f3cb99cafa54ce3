// The oneDNN convolutions and poolings of the CPU backend, and the conv + ReLU + pool
// block that keeps its convolution output in oneDNN's layout (cpu_dnnl.h says what each
// takes).
#include <string>
#include <unordered_map>

#include "device/cpu/cpu_dnnl_device.h"
#include "device/cpu/cpu_loops.h"

namespace dp::dnnl_cpu {

namespace {
struct ConvGeom {
  memory::dims strides, pad_l, pad_r;
};
ConvGeom conv_geom(const KView& x, const KView& w, const KView& y, const Conv2dParams& p) {
  // pad_r makes oneDNN's output size equal PyTorch's floor((H + 2p - k) / s) + 1.
  const int64_t pr_h = (y.shape[2] - 1) * p.stride_h + w.shape[2] - x.shape[2] - p.pad_h;
  const int64_t pr_w = (y.shape[3] - 1) * p.stride_w + w.shape[3] - x.shape[3] - p.pad_w;
  return {{p.stride_h, p.stride_w}, {p.pad_h, p.pad_w}, {pr_h, pr_w}};
}

// v described as float32 (a shape; the data pointer is v's).
KView as_f32(const KView& v) {
  KView f = v;
  f.dtype = DType::kFloat32;
  return f;
}

// The float32 copy of bfloat16 view v in temporary `slot`.
KView widened(DnnlDevice& d, const KView& v, size_t slot) {
  KView f = as_f32(v);
  f.data = d.temp(slot, static_cast<size_t>(v.numel()) * sizeof(float));
  cpu_loops::bf16_to_float(v.as<uint16_t>(), f.as<float>(), v.numel());
  return f;
}

// The bias a forward convolution hands oneDNN: a bfloat16 bias widened (exactly) into
// float32 in temporary `slot`. oneDNN's bfloat16 convolutions add the bias to their float32
// sums either way, and add a bfloat16 one more slowly (the CNN's first convolution at batch
// 256 on AVX512-BF16 took about a fifth longer).
const KView* f32_bias(DnnlDevice& d, const KView* bias, KView* widened_bias, size_t slot) {
  if (!bias || bias->dtype != DType::kBFloat16) return bias;
  *widened_bias = widened(d, *bias, slot);
  return widened_bias;
}
}  // namespace

// Convolutions let oneDNN pick its blocked formats (format_tag::any) and reorder the
// plain NCHW tensors in and out: on this machine the blocked kernels run about twice as
// fast as the plain-format ones, reorders included. Views of float32 or bfloat16 (the
// latter only where bf16_native: oneDNN's bfloat16 convolutions sum in float32).
static memory::desc any_md(const KView& v, dt type) {
  return memory::desc(dims_of(v), type, memory::format_tag::any);
}
static memory::desc any_md(const KView& v) {
  return any_md(v, dt_of(v.dtype));
}

// The bias (or bias gradient) of a convolution with `out_channels` outputs, of `type`;
// dt::undef: none.
static memory::desc conv_bias_md(int64_t out_channels, dt type) {
  return type == dt::undef ? memory::desc() : md_of(memory::dims{out_channels}, type);
}
static dt type_of(const KView* v) {
  return v ? dt_of(v->dtype) : dt::undef;
}

static dnnl::convolution_forward::primitive_desc conv_fwd_pd(DnnlDevice& d, const KView& x,
                                                             const KView& w, dt bias,
                                                             const KView& y, const Conv2dParams& p,
                                                             const dnnl::primitive_attr& attr) {
  const ConvGeom g = conv_geom(x, w, y, p);
  const memory::desc bmd = conv_bias_md(w.shape[0], bias);
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                      any_md(x), any_md(w), bmd, any_md(y), g.strides, g.pad_l,
                                      g.pad_r),
      attr, d.eng);
}

static Key conv_key(char op, const KView& x, const KView& w, const KView& y, bool bias,
                    const Conv2dParams& p) {
  Key key(op);
  key.add(x).add(w).add(y).add(bias).add(p.stride_h).add(p.stride_w).add(p.pad_h).add(p.pad_w);
  key.add(p.relu).add(static_cast<int64_t>(x.dtype)).add(static_cast<int64_t>(y.dtype));
  return key;
}

bool conv2d(DnnlDevice& d, const KView& x, const KView& w, const KView* bias, const KView& y,
            const Conv2dParams& p) {
  if (y.numel() == 0 || x.numel() == 0) return false;
  guarded("convolution", [&] {
    const Key key = conv_key('c', x, w, y, bias != nullptr, p);
    KView wide;
    bias = f32_bias(d, bias, &wide, 13);
    Cached& c = d.get<dnnl::convolution_forward>(key, [&](dnnl::primitive_attr attr) {
      if (p.relu) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
        attr.set_post_ops(ops);
      }
      return conv_fwd_pd(d, x, w, type_of(bias), y, p, attr);
    });
    memory dst = d.output(c.pd.dst_desc(), y, 2);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, d.to_format(c.pd.src_desc(), x, 0, key.str('s'))},
        {DNNL_ARG_WEIGHTS, d.to_format(c.pd.weights_desc(), w, 1, key.str('w'))},
        {DNNL_ARG_DST, dst}};
    if (bias) args.emplace(DNNL_ARG_BIAS, d.mem(*bias));
    d.run(c, std::move(args));
    d.finish_output(dst, y, key.str('y'));
  });
  return true;
}

// The backward primitives of a convolution (no ReLU: callers apply its mask first).
static Cached& conv_bwd_data_prim(DnnlDevice& d, const Key& key, const KView& gx, const KView& w,
                                  const KView& gy, const Conv2dParams& p) {
  return d.get<dnnl::convolution_backward_data>(key, [&](const dnnl::primitive_attr& attr) {
    const ConvGeom g = conv_geom(gx, w, gy, p);
    auto hint = conv_fwd_pd(d, gx, w, dt::undef, gy, p, dnnl::primitive_attr());
    return dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(algorithm::convolution_direct, any_md(gx), any_md(w),
                                              any_md(gy), g.strides, g.pad_l, g.pad_r),
        attr, d.eng, hint);
  });
}

static Cached& conv_bwd_weights_prim(DnnlDevice& d, const Key& key, const KView& x, const KView& gw,
                                     dt bias, const KView& gy, const Conv2dParams& p) {
  return d.get<dnnl::convolution_backward_weights>(key, [&](const dnnl::primitive_attr& attr) {
    const ConvGeom g = conv_geom(x, gw, gy, p);
    auto hint = conv_fwd_pd(d, x, gw, bias, gy, p, dnnl::primitive_attr());
    const memory::desc bmd = conv_bias_md(gw.shape[0], bias);
    return dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, any_md(x),
                                                 any_md(gw), bmd, any_md(gy), g.strides, g.pad_l,
                                                 g.pad_r),
        attr, d.eng, hint);
  });
}

bool conv2d_backward_data(DnnlDevice& d, const KView& gy, const KView& w, const KView& gx,
                          const Conv2dParams& p) {
  if (gy.numel() == 0 || gx.numel() == 0) return false;
  guarded("convolution backward data", [&] {
    const Key key = conv_key('C', gx, w, gy, false, p);
    Cached& c = conv_bwd_data_prim(d, key, gx, w, gy, p);
    memory diff_src = d.output(c.pd.diff_src_desc(), gx, 2);
    d.run(c, {{DNNL_ARG_DIFF_DST, d.to_format(c.pd.diff_dst_desc(), gy, 0, key.str('g'))},
              {DNNL_ARG_WEIGHTS, d.to_format(c.pd.weights_desc(), w, 1, key.str('w'))},
              {DNNL_ARG_DIFF_SRC, diff_src}});
    d.finish_output(diff_src, gx, key.str('x'));
  });
  return true;
}

bool conv2d_backward_weights(DnnlDevice& d, const KView& x, const KView& gy, const KView& gw,
                             const KView* gbias, const Conv2dParams& p) {
  if (gy.numel() == 0 || x.numel() == 0) return false;
  guarded("convolution backward weights", [&] {
    const Key key = conv_key('W', x, gw, gy, gbias != nullptr, p);
    Cached& c = conv_bwd_weights_prim(d, key, x, gw, type_of(gbias), gy, p);
    memory diff_w = d.output(c.pd.diff_weights_desc(), gw, 1);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, d.to_format(c.pd.src_desc(), x, 0, key.str('s'))},
        {DNNL_ARG_DIFF_DST, d.to_format(c.pd.diff_dst_desc(), gy, 2, key.str('g'))},
        {DNNL_ARG_DIFF_WEIGHTS, diff_w}};
    if (gbias) args.emplace(DNNL_ARG_DIFF_BIAS, d.mem(*gbias));
    d.run(c, std::move(args));
    d.finish_output(diff_w, gw, key.str('w'));
  });
  return true;
}

// Pooling x (shape) into y (shape), the memories laid out as x_md and y_md.
static dnnl::pooling_forward::primitive_desc pool_pd(DnnlDevice& d, const memory::desc& x_md,
                                                     const memory::desc& y_md, const KView& x,
                                                     const KView& y, const Pool2dParams& p,
                                                     bool training,
                                                     const dnnl::primitive_attr& attr) {
  const int64_t pr_h = (y.shape[2] - 1) * p.stride_h + p.kernel_h - x.shape[2] - p.pad_h;
  const int64_t pr_w = (y.shape[3] - 1) * p.stride_w + p.kernel_w - x.shape[3] - p.pad_w;
  const algorithm alg =
      p.kind == PoolKind::kMax ? algorithm::pooling_max : algorithm::pooling_avg_include_padding;
  return dnnl::pooling_forward::primitive_desc(
      dnnl::pooling_forward::desc(
          training ? prop_kind::forward_training : prop_kind::forward_inference, alg, x_md, y_md,
          {p.stride_h, p.stride_w}, {p.kernel_h, p.kernel_w}, {p.pad_h, p.pad_w}, {pr_h, pr_w}),
      attr, d.eng);
}

static dnnl::pooling_forward::primitive_desc pool_fwd_pd(DnnlDevice& d, const KView& x,
                                                         const KView& y, const Pool2dParams& p,
                                                         bool training,
                                                         const dnnl::primitive_attr& attr) {
  return pool_pd(d, md_of(x), md_of(y), x, y, p, training, attr);
}

static Key pool_key(char op, const KView& x, const KView& y, const Pool2dParams& p, bool training) {
  Key key(op);
  key.add(x).add(y).add(static_cast<int64_t>(p.kind)).add(p.kernel_h).add(p.kernel_w);
  key.add(p.stride_h).add(p.stride_w).add(p.pad_h).add(p.pad_w).add(training);
  return key;
}

size_t pool2d_workspace_bytes(DnnlDevice& d, const KView& x, const KView& y,
                              const Pool2dParams& p) {
  if (y.numel() == 0 || x.numel() == 0) return 0;
  size_t bytes = 0;
  guarded("pooling", [&] {
    Cached& c = d.get<dnnl::pooling_forward>(
        pool_key('p', x, y, p, true),
        [&](const dnnl::primitive_attr& attr) { return pool_fwd_pd(d, x, y, p, true, attr); });
    bytes = c.workspace_bytes;
  });
  return bytes;
}

bool pool2d(DnnlDevice& d, const KView& x, const KView& y, void* workspace, const Pool2dParams& p) {
  if (y.numel() == 0 || x.numel() == 0) return false;
  const bool training = workspace != nullptr || p.kind == PoolKind::kAvg;
  guarded("pooling", [&] {
    Cached& c = d.get<dnnl::pooling_forward>(
        pool_key('p', x, y, p, training),
        [&](const dnnl::primitive_attr& attr) { return pool_fwd_pd(d, x, y, p, training, attr); });
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, d.mem(x)}, {DNNL_ARG_DST, d.mem(y)}};
    if (c.workspace_bytes) args.emplace(DNNL_ARG_WORKSPACE, d.mem(c.workspace_md, workspace));
    d.run(c, std::move(args));
  });
  return true;
}

bool pool2d_backward(DnnlDevice& d, const KView& gy, const KView& x, const void* workspace,
                     const KView& gx, const Pool2dParams& p) {
  if (gy.numel() == 0 || gx.numel() == 0) return false;
  guarded("pooling backward", [&] {
    Cached& fwd = d.get<dnnl::pooling_forward>(
        pool_key('p', x, gy, p, true),
        [&](const dnnl::primitive_attr& attr) { return pool_fwd_pd(d, x, gy, p, true, attr); });
    Cached& c = d.get<dnnl::pooling_backward>(
        pool_key('P', x, gy, p, true), [&](const dnnl::primitive_attr& attr) {
          const int64_t pr_h = (gy.shape[2] - 1) * p.stride_h + p.kernel_h - x.shape[2] - p.pad_h;
          const int64_t pr_w = (gy.shape[3] - 1) * p.stride_w + p.kernel_w - x.shape[3] - p.pad_w;
          const algorithm alg = p.kind == PoolKind::kMax ? algorithm::pooling_max
                                                         : algorithm::pooling_avg_include_padding;
          return dnnl::pooling_backward::primitive_desc(
              dnnl::pooling_backward::desc(alg, md_of(gx), md_of(gy), {p.stride_h, p.stride_w},
                                           {p.kernel_h, p.kernel_w}, {p.pad_h, p.pad_w},
                                           {pr_h, pr_w}),
              attr, d.eng, pool_fwd_pd(d, x, gy, p, true, dnnl::primitive_attr()));
        });
    std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, d.mem(gy)},
                                         {DNNL_ARG_DIFF_SRC, d.mem(gx)}};
    if (fwd.workspace_bytes) args.emplace(DNNL_ARG_WORKSPACE, d.mem(fwd.workspace_md, workspace));
    d.run(c, std::move(args));
  });
  return true;
}

// --- conv2d + ReLU + pooling as one block --------------------------------------------
// The convolution writes its ReLU output y in oneDNN's blocked layout and the pooling reads
// it there: y never takes the plain NCHW form, which saves two reorders of the block's
// largest tensor and runs the pooling on the blocked layout (about 2.5x faster than on
// NCHW here). Backward does the same in reverse. The saved state is the pooling's
// workspace, after y for average pooling: max pooling without padding keeps its argmax
// bytes (the library's own loops), other max pooling oneDNN's workspace.

namespace {

struct BlockPds {
  Cached* conv = nullptr;  // forward, ReLU fused
  Cached* pool = nullptr;  // forward on the conv's dst layout (null with own_block)
  memory::desc y_md;       // the conv's (blocked) dst: float32, or bfloat16 (see block_pds)
  memory::desc gy_md;      // y's gradient: y_md's layout in float32
  // Max pooling without padding on a y in aBcd16b or aBcd8b, or in NHWC (acdb, nhwc)
  // with a multiple of 16 channels, runs cpu_loops' max_pool_blocked (own_block: the
  // channel block, 0 for oneDNN's pooling) with z in y's layout; the workspace is one
  // argmax byte per element of z, which also holds the ReLU's mask (kNoGradient where z
  // is 0).
  int own_block = 0;
  bool nhwc = false;
  memory::desc z_md;  // the pooling's dst
  // Max pooling needs no y for its backward: the ReLU commutes with the maximum, so the
  // ReLU's mask at each window's argmax is (z > 0). The own loops mark it in the argmax;
  // with oneDNN's pooling it is applied to gz before the pooling's backward. Average
  // pooling keeps y in the state for the mask.
  bool keep_y = false;
  size_t y_bytes = 0, ws_offset = 0, state_bytes = 0;
};

Key block_key(char op, const KView& x, const KView& w, const KView& y, const KView& z, bool bias,
              const Conv2dParams& cp, const Pool2dParams& pp, bool training) {
  Key key = conv_key(op, x, w, y, bias, cp);
  key.add(z).add(static_cast<int64_t>(pp.kind)).add(pp.kernel_h).add(pp.kernel_w);
  key.add(pp.stride_h).add(pp.stride_w).add(pp.pad_h).add(pp.pad_w).add(training);
  return key;
}

dnnl::pooling_forward::primitive_desc block_pool_pd(DnnlDevice& d, const memory::desc& y_md,
                                                    const KView& y, const KView& z,
                                                    const Pool2dParams& p, bool training,
                                                    const dnnl::primitive_attr& attr) {
  return pool_pd(d, y_md, any_md(z, dt::f32), y, z, p, training, attr);
}

// oneDNN's layout with `block` channels innermost (16 or 8).
memory::format_tag channel_blocked(int block) {
  return block == 16 ? memory::format_tag::aBcd16b : memory::format_tag::aBcd8b;
}

// The channel block of y's layout when cpu_loops' max pooling applies to it (max, no
// padding, float32 or bfloat16 in aBcd16b or aBcd8b, or in NHWC with a multiple of 16
// channels: *nhwc), else 0.
int own_pool_block(const memory::desc& y_md, const KView& y, const Pool2dParams& p, bool* nhwc) {
  *nhwc = false;
  if (p.kind != PoolKind::kMax || p.pad_h != 0 || p.pad_w != 0 ||
      p.kernel_h * p.kernel_w >= cpu_loops::kNoGradient)
    return 0;
  const dt type = y_md.data_type();
  if (type != dt::f32 && type != dt::bf16) return 0;
  for (int block : {16, 8}) {
    if (y_md == memory::desc(dims_of(y), type, channel_blocked(block))) return block;
  }
  if (y.shape[1] % 16 == 0 && y_md == memory::desc(dims_of(y), type, memory::format_tag::acdb)) {
    *nhwc = true;
    return 16;
  }
  return 0;
}

// bfloat16 blocks (x, w, bias and z in bfloat16, on a CPU with native bfloat16) convolve in
// bfloat16. Where the library's pooling loops take the convolution's layout, y is
// bfloat16 (the convolution rounds it) and they pool it as such; elsewhere y is float32,
// which the block rounds to bfloat16 values (as Conv2dParams::round_bf16) before oneDNN's
// pooling. Either way pooling's backward runs in float32, and the convolution's backward
// takes the pooled gradient in bfloat16. The bias has the weight's dtype; the convolution
// takes it in float32 (f32_bias).
BlockPds block_pds(DnnlDevice& d, const KView& x, const KView& w, bool bias, const KView& y,
                   const KView& z, Conv2dParams cp, const Pool2dParams& pp, bool training) {
  cp.relu = true;
  BlockPds b;
  auto conv_into = [&](DType y_type, char tag) {
    KView yt = y;
    yt.dtype = y_type;
    return &d.get<dnnl::convolution_forward>(
        block_key(tag, x, w, y, z, bias, cp, pp, true), [&](dnnl::primitive_attr attr) {
          dnnl::post_ops ops;
          ops.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
          attr.set_post_ops(ops);
          return conv_fwd_pd(d, x, w, bias ? dt::f32 : dt::undef, yt, cp, attr);
        });
  };
  b.conv = conv_into(x.dtype, 'b');
  b.y_md = b.conv->pd.dst_desc();
  b.own_block = own_pool_block(b.y_md, y, pp, &b.nhwc);
  if (x.dtype == DType::kBFloat16 && !b.own_block) {
    b.conv = conv_into(DType::kFloat32, 'B');
    b.y_md = b.conv->pd.dst_desc();
    b.own_block = own_pool_block(b.y_md, y, pp, &b.nhwc);
  }
  // The own loops' float32 tensors (y's gradient, z) in y's layout.
  const auto own_layout = b.nhwc ? memory::format_tag::acdb : channel_blocked(b.own_block);
  b.gy_md = b.own_block ? memory::desc(dims_of(y), dt::f32, own_layout) : b.y_md;
  size_t ws_bytes = 0;
  if (b.own_block) {
    b.z_md = memory::desc(dims_of(z), dt::f32, own_layout);
    ws_bytes = b.z_md.get_size() / sizeof(float);
  } else {
    b.pool = &d.get<dnnl::pooling_forward>(
        block_key('q', x, w, y, z, bias, cp, pp, training), [&](const dnnl::primitive_attr& attr) {
          return block_pool_pd(d, b.y_md, y, z, pp, training, attr);
        });
    b.z_md = b.pool->pd.dst_desc();
    ws_bytes = b.pool->workspace_bytes;
  }
  b.keep_y = pp.kind != PoolKind::kMax;
  b.y_bytes = b.y_md.get_size();
  b.ws_offset = b.keep_y ? (b.y_bytes + 63) / 64 * 64 : 0;
  b.state_bytes = b.ws_offset + ws_bytes;
  return b;
}

cpu_loops::BlockedPool blocked_pool(const KView& y, const KView& z, const Pool2dParams& p,
                                    const BlockPds& b) {
  const int block = b.own_block;
  const int64_t channel_blocks = (y.shape[1] + block - 1) / block;
  return {y.shape[0] * channel_blocks,
          y.shape[2],
          y.shape[3],
          z.shape[2],
          z.shape[3],
          p.kernel_h,
          p.kernel_w,
          p.stride_h,
          p.stride_w,
          block,
          /*relu_mask=*/true,
          /*groups=*/b.nhwc ? channel_blocks : 0};
}

bool block_supported(const KView& x, const KView& y, const KView& z) {
  const bool dtype_ok =
      x.dtype == DType::kFloat32 || (x.dtype == DType::kBFloat16 && bf16_native());
  return dtype_ok && x.numel() > 0 && y.numel() > 0 && z.numel() > 0;
}

}  // namespace

size_t conv_relu_pool_state_bytes(DnnlDevice& d, const KView& x, const KView& w, bool bias,
                                  const KView& y, const KView& z, const Conv2dParams& cp,
                                  const Pool2dParams& pp) {
  if (!block_supported(x, y, z)) return 0;
  size_t bytes = 0;
  guarded("convolution block",
          [&] { bytes = block_pds(d, x, w, bias, y, z, cp, pp, true).state_bytes; });
  return bytes;
}

bool conv_relu_pool(DnnlDevice& d, const KView& x, const KView& w, const KView* bias,
                    const KView& y, const KView& z, void* state, const Conv2dParams& cp,
                    const Pool2dParams& pp) {
  if (!block_supported(x, y, z)) return false;
  const bool training = state != nullptr || pp.kind == PoolKind::kAvg;
  guarded("convolution block", [&] {
    const BlockPds b = block_pds(d, x, w, bias != nullptr, y, z, cp, pp, training);
    const std::string key = block_key('b', x, w, y, z, bias != nullptr, cp, pp, true).str();
    char* state_data = static_cast<char*>(state);
    char* y_data = state && b.keep_y ? state_data : static_cast<char*>(d.temp(3, b.y_bytes));
    const memory y_mem(b.y_md, d.eng, y_data);
    KView wide;
    bias = f32_bias(d, bias, &wide, 13);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, d.to_format(b.conv->pd.src_desc(), x, 0, key + "fs")},
        {DNNL_ARG_WEIGHTS, d.to_format(b.conv->pd.weights_desc(), w, 1, key + "fw")},
        {DNNL_ARG_DST, y_mem}};
    if (bias) args.emplace(DNNL_ARG_BIAS, d.mem(*bias));
    d.run(*b.conv, std::move(args));
    const bool y_bf16 = b.y_md.data_type() == dt::bf16;
    if ((cp.round_bf16 || x.dtype == DType::kBFloat16) && !y_bf16) {
      cpu_loops::round_to_bf16(reinterpret_cast<float*>(y_data),
                               static_cast<int64_t>(b.y_bytes / sizeof(float)));
    }
    memory z_mem = d.output(b.z_md, z, 4);
    if (b.own_block) {
      float* z_data = static_cast<float*>(z_mem.get_data_handle());
      uint8_t* argmax = state ? reinterpret_cast<uint8_t*>(state_data + b.ws_offset) : nullptr;
      if (y_bf16) {
        cpu_loops::max_pool_blocked(reinterpret_cast<const uint16_t*>(y_data), z_data, argmax,
                                    blocked_pool(y, z, pp, b));
      } else {
        cpu_loops::max_pool_blocked(reinterpret_cast<const float*>(y_data), z_data, argmax,
                                    blocked_pool(y, z, pp, b));
      }
    } else {
      std::unordered_map<int, memory> pargs{{DNNL_ARG_SRC, y_mem}, {DNNL_ARG_DST, z_mem}};
      if (b.pool->workspace_bytes) {
        pargs.emplace(DNNL_ARG_WORKSPACE,
                      memory(b.pool->workspace_md, d.eng, state_data + b.ws_offset));
      }
      d.run(*b.pool, std::move(pargs));
    }
    d.finish_output(z_mem, z, key + "fz");
  });
  return true;
}

bool conv_relu_pool_backward(DnnlDevice& d, const KView& gz, const KView& x, const KView& w,
                             const KView& y, const KView& z_out, const void* state, const KView* gx,
                             const KView& gw, const KView* gbias, const Conv2dParams& cp,
                             const Pool2dParams& pp) {
  if (!block_supported(x, y, gz)) return false;
  guarded("convolution block backward", [&] {
    const BlockPds b = block_pds(d, x, w, gbias != nullptr, y, gz, cp, pp, true);
    const std::string key = block_key('b', x, w, y, gz, gbias != nullptr, cp, pp, true).str();
    const KView& z = gz;
    char* state_data = static_cast<char*>(const_cast<void*>(state));
    // Pooling backward into gy (blocked, a temporary). The ReLU's mask comes before it for
    // oneDNN's max pooling, is in the argmax for the own loops, and comes after it, from
    // y, for average pooling.
    const memory gy_mem(b.gy_md, d.eng, d.temp(5, b.gy_md.get_size()));
    const bool bf16 = gz.dtype == DType::kBFloat16;
    KView gz_in = bf16 ? widened(d, gz, 8) : gz;  // pooling's backward runs in float32
    if (!b.keep_y && !b.own_block) {
      // The ReLU's mask on the pooled gradient: (z > 0), z being the block's output (the
      // own loops marked those outputs in the argmax already).
      const KView z32 = bf16 ? widened(d, z_out, 9) : z_out;
      KView masked = gz_in;
      masked.data = d.temp(7, static_cast<size_t>(gz.numel()) * sizeof(float));
      DP_CHECK(unary_backward(d, UnaryOp::kRelu, gz_in, z32, masked), kInternal,
               "convolution block backward: no ReLU backward primitive");
      gz_in = masked;
    }
    const memory gz_mem = d.to_format(b.z_md, gz_in, 4, key + "pz");
    if (b.own_block) {
      d.strm.wait();  // the reorder into gz_mem is done
      cpu_loops::max_pool_blocked_backward(
          static_cast<const float*>(gz_mem.get_data_handle()),
          reinterpret_cast<const uint8_t*>(state_data + b.ws_offset),
          static_cast<float*>(gy_mem.get_data_handle()), blocked_pool(y, z, pp, b));
    } else {
      Cached& pb = d.get<dnnl::pooling_backward>(
          block_key('Q', x, w, y, z, gbias != nullptr, cp, pp, true),
          [&](const dnnl::primitive_attr& attr) {
            const int64_t pr_h =
                (z.shape[2] - 1) * pp.stride_h + pp.kernel_h - y.shape[2] - pp.pad_h;
            const int64_t pr_w =
                (z.shape[3] - 1) * pp.stride_w + pp.kernel_w - y.shape[3] - pp.pad_w;
            const algorithm alg = pp.kind == PoolKind::kMax
                                      ? algorithm::pooling_max
                                      : algorithm::pooling_avg_include_padding;
            return dnnl::pooling_backward::primitive_desc(
                dnnl::pooling_backward::desc(alg, b.y_md, b.z_md, {pp.stride_h, pp.stride_w},
                                             {pp.kernel_h, pp.kernel_w}, {pp.pad_h, pp.pad_w},
                                             {pr_h, pr_w}),
                attr, d.eng, block_pool_pd(d, b.y_md, y, z, pp, true, dnnl::primitive_attr()));
          });
      std::unordered_map<int, memory> pargs{{DNNL_ARG_DIFF_DST, gz_mem},
                                            {DNNL_ARG_DIFF_SRC, gy_mem}};
      if (b.pool->workspace_bytes) {
        pargs.emplace(DNNL_ARG_WORKSPACE,
                      memory(b.pool->workspace_md, d.eng, state_data + b.ws_offset));
      }
      d.run(pb, std::move(pargs));
    }
    if (b.keep_y) {  // the ReLU's mask from y itself
      Cached& rb = d.get<dnnl::eltwise_backward>(
          block_key('R', x, w, y, z, gbias != nullptr, cp, pp, true),
          [&](const dnnl::primitive_attr& attr) {
            auto hint = dnnl::eltwise_forward::primitive_desc(
                dnnl::eltwise_forward::desc(prop_kind::forward_training,
                                            algorithm::eltwise_relu_use_dst_for_bwd, b.y_md, 0.f),
                d.eng);
            return dnnl::eltwise_backward::primitive_desc(
                dnnl::eltwise_backward::desc(algorithm::eltwise_relu_use_dst_for_bwd, b.y_md,
                                             b.y_md, 0.f),
                attr, d.eng, hint);
          });
      const memory y_mem(b.y_md, d.eng, state_data);
      d.run(rb, {{DNNL_ARG_DST, y_mem}, {DNNL_ARG_DIFF_DST, gy_mem}, {DNNL_ARG_DIFF_SRC, gy_mem}});
    }
    // gy in the layout (and dtype: bfloat16 blocks take it in bfloat16) a convolution
    // backward asks for; reordered once when both backwards ask for the same.
    memory gy_other;
    auto gy_as = [&](const memory::desc& want, const char* tag) {
      if (want == b.gy_md) return gy_mem;
      if (gy_other && gy_other.get_desc() == want) return gy_other;
      gy_other = memory(want, d.eng, d.temp(6, want.get_size()));
      d.reorder(key + tag, gy_mem, gy_other);
      return gy_other;
    };
    Conv2dParams plain = cp;
    plain.relu = false;
    if (gx) {
      Cached& c = conv_bwd_data_prim(d, conv_key('C', *gx, w, y, false, plain), *gx, w, y, plain);
      memory diff_src = d.output(c.pd.diff_src_desc(), *gx, 2);
      d.run(c, {{DNNL_ARG_DIFF_DST, gy_as(c.pd.diff_dst_desc(), "dy")},
                {DNNL_ARG_WEIGHTS, d.to_format(c.pd.weights_desc(), w, 1, key + "dw")},
                {DNNL_ARG_DIFF_SRC, diff_src}});
      d.finish_output(diff_src, *gx, key + "dx");
    }
    // Windows that do not overlap route each pooled gradient to one place: gy then holds
    // bfloat16 values (of gz), else sums of them, which the bfloat16 convolutions' input
    // rounds (the reorder of gy_as).
    const bool gy_exact = pp.stride_h >= pp.kernel_h && pp.stride_w >= pp.kernel_w;
    if (b.own_block && !b.nhwc && x.shape[1] == 1 && (!bf16 || gy_exact)) {
      // One input channel: the library's loop on gy as it stands (see
      // cpu_loops::conv_single_channel_backward_weights). bfloat16 blocks: on x widened
      // (exact) and gy's bfloat16 values; the float32 sums round once into gw and gbias,
      // as oneDNN's bfloat16 backward would (which here took 3.5 ms, and 2 more to reorder
      // gy, for the CNN's first layer at batch 256 on AMX).
      d.strm.wait();  // gy is complete
      const KView x32 = bf16 ? widened(d, x, 10) : x;
      float* gw32 =
          bf16 ? static_cast<float*>(d.temp(11, static_cast<size_t>(gw.numel()) * sizeof(float)))
               : gw.as<float>();
      float* gb32 = nullptr;
      if (gbias) {
        gb32 = bf16 ? static_cast<float*>(
                          d.temp(12, static_cast<size_t>(gbias->numel()) * sizeof(float)))
                    : gbias->as<float>();
      }
      cpu_loops::conv_single_channel_backward_weights(
          x32.as<float>(), static_cast<const float*>(gy_mem.get_data_handle()), gw32, gb32,
          {x.shape[0], x.shape[2], x.shape[3], y.shape[1], y.shape[2], y.shape[3],
           static_cast<int>(w.shape[2]), static_cast<int>(w.shape[3]), cp.stride_h, cp.stride_w,
           cp.pad_h, cp.pad_w, b.own_block});
      if (bf16) {
        cpu_loops::float_to_bf16(gw32, gw.as<uint16_t>(), gw.numel());
        if (gbias) cpu_loops::float_to_bf16(gb32, gbias->as<uint16_t>(), gbias->numel());
      }
      return;
    }
    Cached& c = conv_bwd_weights_prim(d, conv_key('W', x, gw, y, gbias != nullptr, plain), x, gw,
                                      type_of(gbias), y, plain);
    memory diff_w = d.output(c.pd.diff_weights_desc(), gw, 1);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, d.to_format(c.pd.src_desc(), x, 0, key + "ws")},
        {DNNL_ARG_DIFF_DST, gy_as(c.pd.diff_dst_desc(), "wy")},
        {DNNL_ARG_DIFF_WEIGHTS, diff_w}};
    if (gbias) args.emplace(DNNL_ARG_DIFF_BIAS, d.mem(*gbias));
    d.run(c, std::move(args));
    d.finish_output(diff_w, gw, key + "ww");
  });
  return true;
}
}  // namespace dp::dnnl_cpu
