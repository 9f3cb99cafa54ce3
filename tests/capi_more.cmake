dp_cmocka_test(bad_input)
dp_cmocka_test(ops)
# Option structs from older and newer headers, read by their struct_size.
dp_cmocka_test(abi_older_structs)

# Allocation failures through the C API: a GoogleTest program (it replaces operator new,
# so it is C++) that links the shared library as a user's program would. Not named
# test_capi_*: valgrind, which runs those, replaces operator new itself.
add_executable(test_out_of_memory capi/test_out_of_memory.cc)
target_link_libraries(test_out_of_memory PRIVATE dataparallel dlpack::dlpack GTest::gtest
                                                 GTest::gtest_main dp_warnings)
gtest_discover_tests(test_out_of_memory TEST_PREFIX "capi_oom." DISCOVERY_TIMEOUT 60
                     PROPERTIES LABELS "capi")
