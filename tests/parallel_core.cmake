# C++ tests of the DataParallel pipeline: training equivalence, buffers, comm.
add_executable(test_parallel core/test_parallel.cc)
target_link_libraries(test_parallel PRIVATE dp_core GTest::gtest GTest::gtest_main dp_warnings)
gtest_discover_tests(test_parallel TEST_PREFIX "parallel." DISCOVERY_TIMEOUT 60
                     PROPERTIES LABELS "parallel")
