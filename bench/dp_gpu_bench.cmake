# dp_gpu_bench: the GPU benchmark (scripts/gpu-check.sh). Included from cuda/CMakeLists.txt,
# so it exists only when the CUDA plugin is built. It uses the public C API and, for the
# cudaMemcpy baseline, the CUDA runtime.
add_executable(dp_gpu_bench ${CMAKE_CURRENT_LIST_DIR}/dp_gpu_bench.cc)
target_link_libraries(dp_gpu_bench PRIVATE dataparallel CUDA::cudart dp_warnings)
add_dependencies(dp_gpu_bench dataparallel_cuda)
