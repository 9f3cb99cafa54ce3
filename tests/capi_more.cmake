dp_cmocka_test(bad_input)
dp_cmocka_test(ops)
