# CUDA suites (label "cuda"): every op on CUDA against the CPU backend, DataParallel over
# CUDA devices, the plugin's start-up without a driver, and the plugin's exports. Tests
# that need a GPU skip with "no CUDA device: <why>" on machines without one.
add_executable(test_cuda
  cuda/test_cuda_plugin.cc
  cuda/test_cuda_ops.cc
  cuda/test_cuda_parallel.cc
  ${PROJECT_SOURCE_DIR}/cuda/device_map.cc
)
target_include_directories(test_cuda PRIVATE ${PROJECT_SOURCE_DIR}/cuda)
target_link_libraries(test_cuda PRIVATE dp_core GTest::gtest GTest::gtest_main dp_warnings)
if(DP_CUDA_ENABLED)
  target_compile_definitions(test_cuda PRIVATE
                             DP_CUDA_PLUGIN_PATH="$<TARGET_FILE:dataparallel_cuda>")
  add_dependencies(test_cuda dataparallel_cuda)
  # Memory a foreign producer writes on its own stream (the DLPack import test).
  target_sources(test_cuda PRIVATE cuda/test_cuda_dlpack.cc)
  target_link_libraries(test_cuda PRIVATE CUDA::cudart)
endif()
if(DP_CUDNN_ENABLED)
  # The plugin's cuDNN loader, tested on its own (it needs cuDNN, not a GPU).
  target_sources(test_cuda PRIVATE cuda/test_cudnn_library.cc
                 ${PROJECT_SOURCE_DIR}/cuda/cudnn_library.cc)
  target_link_libraries(test_cuda PRIVATE dp_cudnn)
  add_library(test_fake_cudnn MODULE cuda/fake_cudnn.c)
  target_link_libraries(test_fake_cudnn PRIVATE dp_warnings)
  add_dependencies(test_cuda test_fake_cudnn)
  target_compile_definitions(test_cuda PRIVATE
                             DP_FAKE_CUDNN_PATH="$<TARGET_FILE:test_fake_cudnn>")
  add_test(NAME cuda_cudnn_library_env
           COMMAND test_cuda --gtest_filter=CudnnLibrary.DpCudnnLibraryIsTheOnlyFileTried)
  set_tests_properties(cuda_cudnn_library_env PROPERTIES LABELS "cuda"
                       ENVIRONMENT "DP_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9"
                       FAIL_REGULAR_EXPRESSION "SKIPPED")
  # A GPU without cuDNN to open: convolutions still agree with the CPU, on im2col, and the
  # start-up line says why (skips without a GPU).
  add_test(NAME cuda_without_cudnn
           COMMAND test_cuda --gtest_filter=CudaOps.TheCnnsConvolutionsRunWhereTheStartUpLineSays)
  set_tests_properties(cuda_without_cudnn PROPERTIES LABELS "cuda"
                       ENVIRONMENT "DP_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9"
                       SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
endif()
gtest_discover_tests(test_cuda TEST_PREFIX "cuda." DISCOVERY_TIMEOUT 60
                     PROPERTIES LABELS "cuda" TIMEOUT 600)

if(DP_CUDA_ENABLED)
  add_executable(test_cuda_plugin_load cuda/plugin_load.c)
  target_link_libraries(test_cuda_plugin_load PRIVATE ${CMAKE_DL_LIBS} dp_warnings)
  # The ABI version the core passes (kBackendAbiVersion), for this C program to pass too.
  file(STRINGS ${PROJECT_SOURCE_DIR}/core/device/backend.h _abi_line
       REGEX "constexpr int kBackendAbiVersion = [0-9]+")
  string(REGEX MATCH "[0-9]+" _abi "${_abi_line}")
  if(NOT _abi)
    message(FATAL_ERROR "kBackendAbiVersion not found in core/device/backend.h")
  endif()
  target_compile_definitions(test_cuda_plugin_load PRIVATE DP_BACKEND_ABI_VERSION=${_abi})
  add_test(NAME cuda_plugin_exports
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cuda/check_plugin_exports.sh
                   $<TARGET_FILE:dataparallel_cuda> $<TARGET_FILE:test_cuda_plugin_load>)
  set_tests_properties(cuda_plugin_exports PROPERTIES LABELS "cuda")
endif()
