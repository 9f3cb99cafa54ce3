# The install tree works for consumers (CMake package and pkg-config).
add_test(NAME install_consumer
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install/check_install.sh ${PROJECT_BINARY_DIR}
                 ${CMAKE_CURRENT_SOURCE_DIR}/install)
set_tests_properties(install_consumer PROPERTIES LABELS "install" TIMEOUT 300)
