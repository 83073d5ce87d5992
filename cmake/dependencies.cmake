# Dependencies (all from Debian; scripts/setup.sh installs them), and whether the CUDA
# backend is built (TASO_WITH_CUDA).
find_package(Protobuf REQUIRED)          # must precede ONNX
find_package(ONNX CONFIG REQUIRED)       # targets onnx, onnx_proto
find_package(absl CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(dnnl CONFIG REQUIRED)      # oneDNN 2.x, the cpu backend
find_package(PkgConfig REQUIRED)
pkg_check_modules(Z3 REQUIRED IMPORTED_TARGET z3)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)  # taso-gen's allocator

# CUDA is optional: on where the toolkit is found (compiled, not run, without a GPU).
include(CheckLanguage)
check_language(CUDA)
find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
  find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib ${CUDAToolkit_LIBRARY_ROOT}/lib64)
endif()
if(CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY AND CMAKE_CUDA_COMPILER)
  set(TASO_WITH_CUDA ON)
  # Named GPU generations: "native" fails where no GPU is present (as on CI). 80: A100,
  # 90: H100 and H200.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)  # our .cu files need no more; CMake 3.25 cannot ask nvcc for 20
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  message(STATUS "taso: CUDA backend enabled (cuDNN: ${CUDNN_LIBRARY})")
else()
  set(TASO_WITH_CUDA OFF)
  message(STATUS "taso: CUDA toolkit or cuDNN not found; CUDA backend disabled")
endif()
