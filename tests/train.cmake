# dp-train end to end (pytest through Debian's /usr/bin/python3).
if(NOT TARGET dp-train)
  return()
endif()
add_executable(print_randperm train/print_randperm.c)
target_link_libraries(print_randperm PRIVATE dp_examples_common dp_warnings)
add_test(NAME train_dp_train
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/train
                 --dp-train $<TARGET_FILE:dp-train> --print-randperm $<TARGET_FILE:print_randperm>)
set_tests_properties(train_dp_train PROPERTIES LABELS "train" TIMEOUT 600)
