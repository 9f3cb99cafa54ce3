#include "c_caller.h"

static dp_device device_of(int type, int32_t index) {
  dp_device d;
  d.type = (dp_device_type)type;
  d.index = index;
  return d;
}

dp_result c_tensor_zeros(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                         int device_type, int32_t device_index, dp_tensor** out) {
  return dp_tensor_zeros(ctx, (dp_dtype)dtype, shape, ndim, device_of(device_type, device_index),
                         out);
}

dp_result c_tensor_empty(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                         int device_type, int32_t device_index, dp_tensor** out) {
  return dp_tensor_empty(ctx, (dp_dtype)dtype, shape, ndim, device_of(device_type, device_index),
                         out);
}

dp_result c_tensor_full(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim, double value,
                        int device_type, int32_t device_index, dp_tensor** out) {
  return dp_tensor_full(ctx, (dp_dtype)dtype, shape, ndim, value,
                        device_of(device_type, device_index), out);
}

dp_result c_tensor_from_data(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                             const void* data, size_t nbytes, int device_type, int32_t device_index,
                             dp_tensor** out) {
  return dp_tensor_from_data(ctx, (dp_dtype)dtype, shape, ndim, data, nbytes,
                             device_of(device_type, device_index), out);
}

dp_result c_tensor_from_borrowed(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                                 void* data, size_t nbytes, int32_t cpu_index, dp_tensor** out) {
  return dp_tensor_from_borrowed(ctx, (dp_dtype)dtype, shape, ndim, data, nbytes, cpu_index, out);
}

dp_result c_tensor_from_adopted(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                                void* data, size_t nbytes, int32_t cpu_index, dp_deleter_fn deleter,
                                void* deleter_data, dp_tensor** out) {
  return dp_tensor_from_adopted(ctx, (dp_dtype)dtype, shape, ndim, data, nbytes, cpu_index, deleter,
                                deleter_data, out);
}
