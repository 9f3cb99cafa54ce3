# Finds cuDNN 8 or later (header cudnn.h, library libcudnn): sets CUDNN_FOUND,
# CUDNN_INCLUDE_DIR, CUDNN_LIBRARY and CUDNN_VERSION. Looks beside the CUDA toolkit first, then under $CUDNN_ROOT, then in
# the system paths. NVIDIA's pip wheel ships only libcudnn.so.9 (no unversioned link), so
# that name is tried too.
find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT
  PATH_SUFFIXES include
  PATHS /usr/local/cuda/include /usr/include)
# The library beside the header first, so that both come from one cuDNN.
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
  HINTS ${CUDNN_INCLUDE_DIR}/../lib ${CUDNN_INCLUDE_DIR}/../lib64 ${CUDAToolkit_LIBRARY_DIR}
        ENV CUDNN_ROOT
  PATH_SUFFIXES lib lib64
  PATHS /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
if(CUDNN_INCLUDE_DIR AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    file(STRINGS "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _line
         REGEX "^#define CUDNN_${_part} [0-9]+")
    string(REGEX REPLACE "^#define CUDNN_${_part} ([0-9]+).*" "\\1" _cudnn_${_part} "${_line}")
  endforeach()
  set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
                                  VERSION_VAR CUDNN_VERSION)
if(CUDNN_FOUND AND CUDNN_VERSION VERSION_LESS 8)
  message(STATUS "cuDNN ${CUDNN_VERSION} is older than 8: not used")
  set(CUDNN_FOUND FALSE)
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
