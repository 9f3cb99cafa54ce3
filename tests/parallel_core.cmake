# C++ tests of the DataParallel pipeline: training equivalence, buffers, comm, the trace.
add_executable(test_parallel core/test_parallel.cc core/test_trace.cc)
target_link_libraries(test_parallel PRIVATE dp_core GTest::gtest GTest::gtest_main dp_warnings
                      nlohmann_json::nlohmann_json)
gtest_discover_tests(test_parallel TEST_PREFIX "parallel." DISCOVERY_TIMEOUT 60
                     PROPERTIES LABELS "parallel")

# Fault injection (test-only build option): every allocation of a training step fails in
# turn; the C API's objects are linked in statically to reach the core's test hook.
if(DP_FAULT_INJECTION)
  add_executable(test_fault_injection core/test_fault_injection.cc)
  target_link_libraries(test_fault_injection PRIVATE dp_capi dp_core GTest::gtest GTest::gtest_main
                        dp_warnings)
  gtest_discover_tests(test_fault_injection TEST_PREFIX "fault." DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS "fault")
endif()
