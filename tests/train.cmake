# dp-train end to end (pytest through Debian's /usr/bin/python3). The tests of
# --distributed run it under mpirun (found on PATH) with the MPI plugin, and skip without
# either; each run is bounded (tests/train/test_distributed.py).
if(NOT TARGET dp-train)
  return()
endif()
add_executable(print_randperm train/print_randperm.c)
target_link_libraries(print_randperm PRIVATE dp_examples_common dp_warnings)
set(_train_mpi_plugin "")
if(TARGET dataparallel_mpi)
  set(_train_mpi_plugin --mpi-plugin $<TARGET_FILE:dataparallel_mpi>)
endif()
add_test(NAME train_dp_train
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/train
                 --dp-train $<TARGET_FILE:dp-train> --print-randperm $<TARGET_FILE:print_randperm>
                 ${_train_mpi_plugin})
set_tests_properties(train_dp_train PROPERTIES LABELS "train" TIMEOUT 600)
