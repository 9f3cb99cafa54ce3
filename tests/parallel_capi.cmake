# SPEC.md conformance of the DataParallel pipeline through the C API (sections 2 to 9).
dp_cmocka_test(data_parallel)
