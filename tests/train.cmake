# dp-train end to end (pytest through Debian's /usr/bin/python3).
if(NOT TARGET dp-train)
  return()
endif()
add_test(NAME train_dp_train
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/train
                 --dp-train $<TARGET_FILE:dp-train>)
set_tests_properties(train_dp_train PROPERTIES LABELS "train" TIMEOUT 600)
