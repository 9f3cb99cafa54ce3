/* The tensor creators called the way a C program may call them: the enum arguments
   (dp_dtype, dp_device_type) given as plain ints. C allows any int value there; C++
   does not (a value outside the enumerators' range is undefined behaviour), so the C++
   fuzz targets pass arbitrary values through these C wrappers. */
#ifndef DP_FUZZ_C_CALLER_H_
#define DP_FUZZ_C_CALLER_H_

#include "dataparallel/dataparallel.h"

#ifdef __cplusplus
extern "C" {
#endif

dp_result c_tensor_zeros(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                         int device_type, int32_t device_index, dp_tensor** out);
dp_result c_tensor_empty(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                         int device_type, int32_t device_index, dp_tensor** out);
dp_result c_tensor_full(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim, double value,
                        int device_type, int32_t device_index, dp_tensor** out);
dp_result c_tensor_from_data(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                             const void* data, size_t nbytes, int device_type, int32_t device_index,
                             dp_tensor** out);
dp_result c_tensor_from_borrowed(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                                 void* data, size_t nbytes, int32_t cpu_index, dp_tensor** out);
dp_result c_tensor_from_adopted(dp_context* ctx, int dtype, const int64_t* shape, size_t ndim,
                                void* data, size_t nbytes, int32_t cpu_index, dp_deleter_fn deleter,
                                void* deleter_data, dp_tensor** out);

#ifdef __cplusplus
}
#endif

#endif /* DP_FUZZ_C_CALLER_H_ */
