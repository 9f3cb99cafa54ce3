# Multi-process suites (process groups, DistributedDataParallel), run under the MPI
# launcher when the MPI plugin is built. Each has a bounded time (TIMEOUT) and a short
# collective timeout (DP_DISTRIBUTED_TIMEOUT), so a failing rank ends the job instead of
# hanging it; mpirun ends the other ranks when one exits with an error.
if(NOT DP_MPI_ENABLED)
  return()
endif()


add_executable(test_distributed_ddp distributed/test_ddp.c)
target_include_directories(test_distributed_ddp PRIVATE ${CMOCKA_INCLUDE_DIR})
target_link_libraries(test_distributed_ddp PRIVATE dataparallel ${CMOCKA_LIBRARIES} m dp_warnings)
add_dependencies(test_distributed_ddp dataparallel_mpi)

# Ranks x CPU devices per rank.
foreach(_ranks 2 3)
  foreach(_devices 1 2)
    add_test(NAME distributed_ddp_${_ranks}x${_devices}
             COMMAND ${DP_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${_ranks}
                     $<TARGET_FILE:test_distributed_ddp>)
    set_tests_properties(distributed_ddp_${_ranks}x${_devices} PROPERTIES
      LABELS "distributed" TIMEOUT 300 RUN_SERIAL TRUE
      ENVIRONMENT "DP_TEST_LOCAL_DEVICES=${_devices};DP_DISTRIBUTED_TIMEOUT=60;DP_SPIN_US=0"
      ENVIRONMENT_MODIFICATION "${DP_MPI_SANITIZER_ENV}")
  endforeach()
endforeach()

# Whole-job outcomes (tests/distributed/test_scenarios.py): mismatched models, a killed
# rank, the timeout's message, the overlap seen in the trace.
add_executable(ddp_scenarios distributed/ddp_scenarios.c)
target_link_libraries(ddp_scenarios PRIVATE dataparallel m dp_warnings)
add_dependencies(ddp_scenarios dataparallel_mpi)
string(REPLACE ";" "\\;" _mpiexec_env "${DP_MPIEXEC}")
add_test(NAME distributed_scenarios
         COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider
                 ${CMAKE_CURRENT_SOURCE_DIR}/distributed/test_scenarios.py)
set_tests_properties(distributed_scenarios PROPERTIES
  LABELS "distributed" TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "DP_MPIEXEC=${_mpiexec_env};DP_SCENARIOS=$<TARGET_FILE:ddp_scenarios>;DP_SPIN_US=0"
  ENVIRONMENT_MODIFICATION "${DP_MPI_SANITIZER_ENV}")

# The same DDP suite and scenarios with the plugin built against MPICH
# (libdataparallel_mpi_mpich.so, DP_WITH_MPICH), under MPICH's own launcher: when MPICH is
# installed beside the default MPI. The programs link libdataparallel only; DP_MPI_PLUGIN
# picks the plugin. Hydra ends the job when a rank fails, and MPIEXEC_TIMEOUT ends it, its
# ranks included, before ctest's TIMEOUT would.
if(DP_MPICH_ENABLED)
  add_dependencies(test_distributed_ddp dataparallel_mpi_mpich)
  add_dependencies(ddp_scenarios dataparallel_mpi_mpich)
  set(_mpich_env "DP_MPI_PLUGIN=$<TARGET_FILE:dataparallel_mpi_mpich>;MPIEXEC_TIMEOUT=110")
  foreach(_devices 1 2)
    add_test(NAME distributed_ddp_mpich_2x${_devices}
             COMMAND ${DP_MPICH_MPIEXEC} -n 2 $<TARGET_FILE:test_distributed_ddp>)
    set_tests_properties(distributed_ddp_mpich_2x${_devices} PROPERTIES
      LABELS "distributed;mpich" TIMEOUT 120 RUN_SERIAL TRUE
      ENVIRONMENT "${_mpich_env};DP_TEST_LOCAL_DEVICES=${_devices};DP_DISTRIBUTED_TIMEOUT=60;DP_SPIN_US=0"
      ENVIRONMENT_MODIFICATION "${DP_MPI_SANITIZER_ENV}")
  endforeach()
  add_test(NAME distributed_scenarios_mpich
           COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider
                   ${CMAKE_CURRENT_SOURCE_DIR}/distributed/test_scenarios.py)
  set_tests_properties(distributed_scenarios_mpich PROPERTIES
    LABELS "distributed;mpich" TIMEOUT 300 RUN_SERIAL TRUE
    ENVIRONMENT "${_mpich_env};DP_MPIEXEC=${DP_MPICH_MPIEXEC};DP_SCENARIOS=$<TARGET_FILE:ddp_scenarios>;DP_SPIN_US=0"
    ENVIRONMENT_MODIFICATION "${DP_MPI_SANITIZER_ENV}")
endif()

# Without MPI: one clear error naming what is missing; single-process work unaffected.
add_executable(test_distributed_no_mpi distributed/test_no_mpi.c)
target_link_libraries(test_distributed_no_mpi PRIVATE dataparallel m dp_warnings)
add_test(NAME distributed_plugin_missing COMMAND test_distributed_no_mpi plugin-missing)
set_tests_properties(distributed_plugin_missing PROPERTIES LABELS "distributed"
  ENVIRONMENT "DP_MPI_PLUGIN=/nonexistent/libdataparallel_mpi.so")
add_test(NAME distributed_mpi_not_initialised COMMAND test_distributed_no_mpi not-initialised)
set_tests_properties(distributed_mpi_not_initialised PROPERTIES LABELS "distributed"
  ENVIRONMENT_MODIFICATION "${DP_MPI_SANITIZER_ENV}")
add_test(NAME distributed_timeout_out_of_range COMMAND test_distributed_no_mpi bad-timeout)
set_tests_properties(distributed_timeout_out_of_range PROPERTIES LABELS "distributed")
add_dependencies(test_distributed_no_mpi dataparallel_mpi)
