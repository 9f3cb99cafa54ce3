# docs/spec.md conformance of the DataParallel pipeline through the C API (sections 2 to 10).
dp_cmocka_test(data_parallel)
