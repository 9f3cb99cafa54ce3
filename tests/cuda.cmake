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
  # cudart directly: memory a foreign producer writes on its own stream (the DLPack import
  # test), and the compute capability the bfloat16 tests hold bf16_native to.
  target_sources(test_cuda PRIVATE cuda/test_cuda_dlpack.cc cuda/test_cuda_bf16.cc)
  target_link_libraries(test_cuda PRIVATE CUDA::cudart)
  # The plugin's order of NCCL calls (cuda/nccl_order.h), tested on its own with a kernel
  # that holds a stream (spin_kernel.cu).
  target_sources(test_cuda PRIVATE cuda/test_nccl_order.cc cuda/spin_kernel.cu
                 ${PROJECT_SOURCE_DIR}/cuda/nccl_order.cc ${PROJECT_SOURCE_DIR}/cuda/cuda_errors.cc)
  target_link_libraries(test_cuda PRIVATE CUDA::cublasLt NCCL::nccl)
  set_target_properties(test_cuda PROPERTIES CUDA_ARCHITECTURES "${DP_CUDA_ARCHITECTURES}"
                        CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
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

# Process-group collectives on CUDA tensors under mpirun (test_cuda_process_group.c).
# With a GPU: on NCCL with one rank; through host memory and MPI with two ranks on one GPU
# (NCCL refuses two ranks on one device) and with DP_DISTRIBUTED_CUDA=mpi; on NCCL with
# two ranks where two GPUs exist; each skips (77) without the GPUs it needs, and
# scripts/gpu-check.sh runs them in a step of its own. Without one (label distributed, in
# every build with MPI): the same program over fake_cuda_plugin.cc, whose "GPUs" are host
# memory and whose communicator is MPI, so the process group's routing (the collective
# decision, rank 0's id through MPI, the communicator's calls) runs everywhere. Added once
# tests/distributed.cmake (included after this file) has set DP_MPIEXEC, the launcher.
if(DP_MPI_ENABLED)
  add_executable(test_cuda_process_group cuda/test_cuda_process_group.c)
  target_link_libraries(test_cuda_process_group PRIVATE dataparallel m Threads::Threads dp_warnings)
  add_library(test_fake_cuda_plugin MODULE cuda/fake_cuda_plugin.cc)
  target_include_directories(test_fake_cuda_plugin PRIVATE ${PROJECT_SOURCE_DIR}/core)
  target_link_libraries(test_fake_cuda_plugin PRIVATE MPI::MPI_CXX dp_warnings)
  add_dependencies(test_cuda_process_group dataparallel_mpi test_fake_cuda_plugin)
  if(DP_CUDA_ENABLED)
    add_dependencies(test_cuda_process_group dataparallel_cuda)
  endif()
  # "name|ranks|environment" -> a test of that many ranks with that environment.
  function(dp_add_process_group_test prefix case labels extra_env)
    string(REPLACE "|" ";" _fields "${case}")
    list(GET _fields 0 _name)
    list(GET _fields 1 _ranks)
    string(REGEX REPLACE "^[^|]*\\|[^|]*\\|" "" _env "${case}")
    add_test(NAME ${prefix}_${_name}
             COMMAND ${DP_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${_ranks}
                     $<TARGET_FILE:test_cuda_process_group>)
    set_tests_properties(${prefix}_${_name} PROPERTIES
      LABELS "${labels}" TIMEOUT 120 RUN_SERIAL TRUE SKIP_RETURN_CODE 77
      ENVIRONMENT "${_env};${extra_env}DP_DISTRIBUTED_TIMEOUT=60;DP_SPIN_US=0"
      ENVIRONMENT_MODIFICATION "${DP_MPI_SANITIZER_ENV}")
  endfunction()
  function(dp_add_cuda_process_group_tests)
    foreach(_case
        "comm_2ranks|2|DP_TEST_EXPECT_ROUTE=nccl"
        "comm_3ranks|3|DP_TEST_EXPECT_ROUTE=nccl"
        "two_devices_2ranks|2|DP_FAKE_CUDA_DEVICES=2;DP_TEST_EXPECT_ROUTE=nccl"
        "shared_gpu_2ranks|2|DP_FAKE_CUDA_BUS_ID=0000:3b:00.0;DP_TEST_EXPECT_ROUTE=staging;DP_TEST_EXPECT_REASON=share one GPU"
        "env_mpi_2ranks|2|DP_DISTRIBUTED_CUDA=mpi;DP_TEST_EXPECT_ROUTE=staging;DP_TEST_EXPECT_REASON=DP_DISTRIBUTED_CUDA=mpi"
        "no_comm_1rank|1|DP_FAKE_CUDA_NO_COMM=1;DP_TEST_EXPECT_ROUTE=staging;DP_TEST_EXPECT_REASON=has no communicator"
        "bad_env_1rank|1|DP_DISTRIBUTED_CUDA=gloo;DP_TEST_EXPECT_INVALID_ENV=1")
      dp_add_process_group_test(distributed_cuda_fake "${_case}" "distributed"
                                "DP_CUDA_PLUGIN=$<TARGET_FILE:test_fake_cuda_plugin>;")
    endforeach()
    if(DP_CUDA_ENABLED)
      foreach(_case
          "nccl_1rank|1|DP_TEST_EXPECT_ROUTE=nccl"
          "shared_gpu_2ranks|2|DP_CUDA_DEVICES=0;DP_TEST_EXPECT_ROUTE=staging;DP_TEST_EXPECT_REASON=share one GPU"
          "env_mpi_1rank|1|DP_DISTRIBUTED_CUDA=mpi;DP_TEST_EXPECT_ROUTE=staging;DP_TEST_EXPECT_REASON=DP_DISTRIBUTED_CUDA=mpi"
          "nccl_2ranks_2gpus|2|DP_TEST_MIN_GPUS=2;DP_TEST_EXPECT_ROUTE=nccl")
        dp_add_process_group_test(cuda_process_group "${_case}" "cuda" "")
      endforeach()
    endif()
  endfunction()
  cmake_language(DEFER CALL dp_add_cuda_process_group_tests)
endif()
