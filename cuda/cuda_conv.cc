// Convolution on cuDNN (float32, when the plugin is built with it and DP_CUDA_CONV does not
// say im2col; cuda_cudnn.h), else as im2col + one cuBLAS GEMM per chunk of images, which
// also runs any shape cuDNN offers no suitable algorithm for. bfloat16 runs on cuDNN too
// (bfloat16 tensors, float32 compute) on GPUs with bfloat16 tensor cores; where cuDNN does
// not run it, the float32 path below runs it on widened copies, rounded once
// (float32_copies.h). With the im2col matrix
// col [C * KH * KW, images * pixels] (kernels/kernels.h), all three products are single
// large GEMMs:
//   forward           rows [O, images * pixels]      = W [O, CKK] @ col
//   backward data     gcol [CKK, images * pixels]    = W^T @ gy rows, then col2im
//   backward weights  gW [O, CKK]                   += gy rows @ col^T
// Images are processed in chunks so that the temporaries stay under im2col_budget().
#include <algorithm>

#include "cuda_backend.h"
#include "cuda_errors.h"
#include "float32_copies.h"
#include "kernels/kernels.h"

namespace dp::cuda_plugin {

namespace {

ConvShape conv_shape(const KView& x, const KView& w, const KView& y, const Conv2dParams& p) {
  return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0], w.shape[2], w.shape[3],
          y.shape[2], y.shape[3], p.stride_h, p.stride_w, p.pad_h,    p.pad_w};
}

// Images per chunk: as many as fit `budget` bytes of col plus rows, at least one.
int64_t chunk_images(const ConvShape& g, size_t elem, size_t budget) {
  const int64_t per_image =
      std::max<int64_t>(1, (g.patch() + g.O) * g.pixels() * static_cast<int64_t>(elem));
  return std::clamp<int64_t>(static_cast<int64_t>(budget) / per_image, 1,
                             std::max<int64_t>(g.N, 1));
}

// The images of one call in chunks, with the two temporaries sized for a chunk: the patch
// matrix (col or gcol, [CKK, chunk * pixels]) and the GEMM's rows ([O, chunk * pixels]).
struct ConvChunks {
  ConvChunks(const BackendHost& host, CudaDevice& d, const ConvShape& g, DType dtype, size_t budget,
             const char* patches_name)
      : g(g),
        chunk(chunk_images(g, dtype_size(dtype), budget)),
        patches(host, d, bytes(g.patch(), dtype), patches_name),
        rows(host, d, bytes(g.O, dtype), "conv2d rows") {}

  // f(n0, nb) for each chunk of nb images starting at image n0.
  template <class F>
  void each(F&& f) const {
    for (int64_t n0 = 0; n0 < g.N; n0 += chunk) f(n0, std::min(chunk, g.N - n0));
  }

  const ConvShape g;
  const int64_t chunk;
  ScratchBuffer patches, rows;

 private:
  size_t bytes(int64_t height, DType dtype) const {
    return static_cast<size_t>(height * chunk * g.pixels()) * dtype_size(dtype);
  }
};

}  // namespace

size_t CudaBackend::im2col_budget() const {
  return conv_scratch_bytes_ > 0 ? conv_scratch_bytes_ : size_t{256} << 20;
}

size_t CudaBackend::cudnn_workspace_limit(const CudaDevice& d) const {
  if (conv_scratch_bytes_ > 0) return conv_scratch_bytes_;
  return std::max<size_t>(size_t{256} << 20, d.total_memory / 16);
}

#if DP_HAVE_CUDNN
Cudnn* CudaBackend::cudnn_for(CudaDevice& d, DType dtype) {
  if (conv_engine_ == ConvEngine::kIm2col) return nullptr;
  const bool bf16 = dtype == DType::kBFloat16 && d.compute_major >= 8;  // bf16_native
  if (dtype != DType::kFloat32 && !bf16) return nullptr;
  if (!d.cudnn && d.cudnn_error.empty()) {
    try {
      d.cudnn = std::make_unique<Cudnn>(host_, d, allow_tf32_,
                                        conv_engine_ == ConvEngine::kCudnnBenchmark
                                            ? CudnnAlgoChoice::kMeasured
                                            : CudnnAlgoChoice::kHeuristic,
                                        cudnn_workspace_limit(d));
    } catch (const std::exception& e) {
      d.cudnn_error = e.what();
      if (host_.log) {
        host_.log(host_.log_state, 2 /* DP_LOG_WARNING */,
                  (d.cudnn_error + "; convolutions on " + d.where + " use im2col").c_str());
      }
    }
  }
  return d.cudnn.get();
}
#endif

// Each convolution: cuDNN when it takes the call, else im2col and cuBLAS in float32 or
// float64; in bfloat16, which the im2col path does not take, the float32 path on widened
// copies of the operands, rounded once at the end.

void CudaBackend::conv2d(int dev, const KView& x, const KView& w, const KView* bias, const KView& y,
                         const Conv2dParams& p) {
  CudaDevice& d = worker_device(dev);
  const bool bf16 = y.dtype == DType::kBFloat16;
  if (bf16) {
    need_bf16(d, {{"x", &x}, {"weight", &w}, {"bias", bias}, {"y", &y}}, "conv2d");
  } else {
    need_float(d, y, "conv2d");
  }
  if (y.numel() == 0) return;
  const ConvShape g = conv_shape(x, w, y, p);
#if DP_HAVE_CUDNN
  if (Cudnn* dnn = cudnn_for(d, y.dtype); dnn && dnn->forward(g, y.dtype, x.data, w.data, y.data)) {
    // The bias in float on the product (for bfloat16: on the rounded product, rounded
    // again, PyTorch's order too: its bfloat16 convolution adds the bias after cuDNN's).
    launched(d,
             kernels::channel_bias_relu(d.compute, y.dtype, y.data, g, bias ? bias->data : nullptr,
                                        p.relu),
             "conv2d bias");
    return;
  }
#endif
  if (bf16) {
    Float32Copies f32(host_, d);
    const KView x32 = f32.in(x), w32 = f32.in(w);
    KView bias32;
    if (bias) bias32 = f32.in(*bias);
    const KView y32 = f32.out(y, false);
    conv2d(dev, x32, w32, bias ? &bias32 : nullptr, y32, p);
    f32.finish();
    return;
  }
  const int64_t P = g.pixels();
  ConvChunks c(host_, d, g, y.dtype, im2col_budget(), "im2col");
  c.each([&](int64_t n0, int64_t nb) {
    launched(d, kernels::im2col(d.compute, y.dtype, x.data, c.patches.get(), g, n0, nb), "im2col");
    GemmArgs m;
    m.dtype = y.dtype;
    m.m = g.O;
    m.n = nb * P;
    m.k = g.patch();
    m.a = w.data;
    m.lda = g.patch();
    m.b = c.patches.get();
    m.ldb = nb * P;
    m.c = c.rows.get();
    m.ldc = nb * P;
    d.blas->gemm(m);
    launched(d,
             kernels::rows_to_images(d.compute, y.dtype, c.rows.get(), y.data, g, n0, nb,
                                     bias ? bias->data : nullptr, p.relu),
             "conv2d output");
  });
}

void CudaBackend::conv2d_backward_data(int dev, const KView& gy, const KView& w, const KView& gx,
                                       const Conv2dParams& p) {
  CudaDevice& d = worker_device(dev);
  const bool bf16 = gx.dtype == DType::kBFloat16;
  if (bf16) {
    need_bf16(d, {{"grad_output", &gy}, {"weight", &w}, {"grad_input", &gx}},
              "conv2d backward data");
  } else {
    need_float(d, gx, "conv2d backward");
  }
  if (gx.numel() == 0) return;
  const ConvShape g = conv_shape(gx, w, gy, p);
#if DP_HAVE_CUDNN
  if (Cudnn* dnn = cudnn_for(d, gx.dtype);
      dnn && dnn->backward_data(g, gx.dtype, gy.data, w.data, gx.data)) {
    return;
  }
#endif
  if (bf16) {
    Float32Copies f32(host_, d);
    const KView gy32 = f32.in(gy), w32 = f32.in(w);
    const KView gx32 = f32.out(gx, false);
    conv2d_backward_data(dev, gy32, w32, gx32, p);
    f32.finish();
    return;
  }
  const int64_t P = g.pixels();
  ConvChunks c(host_, d, g, gx.dtype, im2col_budget(), "col2im");
  c.each([&](int64_t n0, int64_t nb) {
    launched(d, kernels::images_to_rows(d.compute, gx.dtype, gy.data, c.rows.get(), g, n0, nb),
             "conv2d gradient rows");
    GemmArgs m;
    m.dtype = gx.dtype;
    m.trans_a = true;  // W stored [O, CKK]
    m.m = g.patch();
    m.n = nb * P;
    m.k = g.O;
    m.a = w.data;
    m.lda = g.patch();
    m.b = c.rows.get();
    m.ldb = nb * P;
    m.c = c.patches.get();
    m.ldc = nb * P;
    d.blas->gemm(m);
    launched(d, kernels::col2im(d.compute, gx.dtype, c.patches.get(), gx.data, g, n0, nb),
             "col2im");
  });
}

// A convolution's bias gradient: gy summed over images and pixels, [N, O, P] -> [1, O, 1]
// (in double for bfloat16, rounded once).
void CudaBackend::conv_bias_gradient(CudaDevice& d, const KView& gy, const KView& gbias,
                                     int64_t images, int64_t channels, int64_t pixels) {
  KView from = gy, to = gbias;
  from.ndim = 3;
  from.shape[0] = images;
  from.shape[1] = channels;
  from.shape[2] = pixels;
  to.ndim = 3;
  to.shape[0] = 1;
  to.shape[1] = channels;
  to.shape[2] = 1;
  launched(d, kernels::reduce_sum(d.compute, d.pool, from, to), "conv2d bias gradient");
}

void CudaBackend::conv2d_backward_weights(int dev, const KView& x, const KView& gy, const KView& gw,
                                          const KView* gbias, const Conv2dParams& p) {
  CudaDevice& d = worker_device(dev);
  const bool bf16 = gw.dtype == DType::kBFloat16;
  if (bf16) {
    need_bf16(d, {{"x", &x}, {"grad_output", &gy}, {"grad_weight", &gw}, {"grad_bias", gbias}},
              "conv2d backward weights");
  } else {
    need_float(d, gw, "conv2d backward");
  }
  const ConvShape g = conv_shape(x, gw, gy, p);
  const int64_t P = g.pixels();
  if (gbias) conv_bias_gradient(d, gy, *gbias, g.N, g.O, P);
  if (gw.numel() == 0) return;
  if (g.N == 0 || P == 0) {  // no output positions: the weights get no gradient
    launched(d, kernels::fill(d.compute, gw, 0.0), "fill");
    return;
  }
#if DP_HAVE_CUDNN
  if (Cudnn* dnn = cudnn_for(d, gw.dtype);
      dnn && dnn->backward_weights(g, gw.dtype, x.data, gy.data, gw.data)) {
    return;
  }
#endif
  if (bf16) {
    Float32Copies f32(host_, d);
    const KView x32 = f32.in(x), gy32 = f32.in(gy);
    const KView gw32 = f32.out(gw, false);
    conv2d_backward_weights(dev, x32, gy32, gw32, nullptr, p);  // the bias gradient is done
    f32.finish();
    return;
  }
  ConvChunks c(host_, d, g, gw.dtype, im2col_budget(), "im2col");
  c.each([&](int64_t n0, int64_t nb) {
    launched(d, kernels::im2col(d.compute, gw.dtype, x.data, c.patches.get(), g, n0, nb), "im2col");
    launched(d, kernels::images_to_rows(d.compute, gw.dtype, gy.data, c.rows.get(), g, n0, nb),
             "conv2d gradient rows");
    GemmArgs m;
    m.dtype = gw.dtype;
    m.trans_b = true;  // col stored [CKK, nb * P]
    m.m = g.O;
    m.n = g.patch();
    m.k = nb * P;
    m.a = c.rows.get();
    m.lda = nb * P;
    m.b = c.patches.get();
    m.ldb = nb * P;
    m.c = gw.data;
    m.ldc = g.patch();
    m.accumulate = n0 > 0;
    d.blas->gemm(m);
  });
}

}  // namespace dp::cuda_plugin
