# Every third-party dependency is found here, once. See docs/dependencies.md for why each was chosen.
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
# libcurl: the HTTP(S) client of OpenAI-compatible model endpoints (models/).
find_package(CURL 7.85 REQUIRED)

# CUDA toolkit: only NVRTC is linked. The driver (libcuda.so.1) is loaded lazily at run time by the
# cuda backend, so that cuset starts and compiles kernels on machines without a GPU (DESIGN §4).
find_package(CUDAToolkit 12.0 REQUIRED)
if(NOT TARGET CUDA::nvrtc)
  message(FATAL_ERROR "CUDAToolkit found at ${CUDAToolkit_LIBRARY_ROOT} but it has no NVRTC library")
endif()
# CMake's CUDA::nvrtc carries the driver (the toolkit's stub libcuda.so) as a link dependency; where
# the link order leaves it a NEEDED entry, binaries then fail to start without libcuda.so.1. NVRTC
# itself needs no driver, so the project links NVRTC alone.
get_target_property(_cuset_nvrtc_location CUDA::nvrtc IMPORTED_LOCATION)
if(NOT _cuset_nvrtc_location)
  get_target_property(_cuset_nvrtc_location CUDA::nvrtc IMPORTED_LOCATION_RELEASE)
endif()
add_library(cuset_nvrtc SHARED IMPORTED)
set_target_properties(cuset_nvrtc PROPERTIES IMPORTED_LOCATION "${_cuset_nvrtc_location}" INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")

# LibTorch: Debian's libtorch-dev (CPU) here, a CUDA LibTorch 2.x via -DTorch_DIR=... elsewhere.
# Torch's CMake config appends its flags to CMAKE_CXX_FLAGS; we keep them on the torch-facing target only.
set(_cuset_saved_cxx_flags "${CMAKE_CXX_FLAGS}")
# CUDA LibTorch configs of some 2.x releases ask for NVTX 2 (CUDA::nvToolsExt), which CUDA 12.9+ no
# longer ships; its header-only successor serves (pytorch/pytorch#152756). No effect on a CPU LibTorch.
if(TARGET CUDA::nvtx3 AND NOT TARGET CUDA::nvToolsExt)
  add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
endif()
find_package(Torch REQUIRED)
set(CMAKE_CXX_FLAGS "${_cuset_saved_cxx_flags}")

# Data-parallel `cuset train` uses LibTorch's c10d (TCPStore, ProcessGroupGloo). Its Gloo header
# includes gloo's own headers: Debian ships them as libgloo-dev; a pip torch ships them in torch/include.
# Without them the build still works and `cuset train` refuses WORLD_SIZE > 1 with a message saying why.
find_path(CUSET_C10D_INCLUDE_DIR torch/csrc/distributed/c10d/ProcessGroupGloo.hpp HINTS ${TORCH_INCLUDE_DIRS})
find_path(CUSET_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS})
if(CUSET_C10D_INCLUDE_DIR AND CUSET_GLOO_INCLUDE_DIR)
  set(_cuset_gloo_default ON)
else()
  set(_cuset_gloo_default OFF)
endif()
option(CUSET_WITH_C10D_GLOO "Data-parallel training through LibTorch's c10d Gloo backend" ${_cuset_gloo_default})
message(STATUS "CuSeT: data-parallel training (c10d Gloo): ${CUSET_WITH_C10D_GLOO}")

# xxHash: content hashing for the compile cache and input-mutation checks.
# gzip for the leaderboard page's embedded sources (the browser inflates them natively).
find_package(ZLIB REQUIRED)
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(cuset_xxhash INTERFACE)
target_include_directories(cuset_xxhash INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(cuset_xxhash INTERFACE ${XXHASH_LIBRARY})

# libseccomp: the system-call allow-list of sandboxed simulator workers.
find_path(SECCOMP_INCLUDE_DIR seccomp.h REQUIRED)
find_library(SECCOMP_LIBRARY seccomp REQUIRED)

if(CUSET_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CUSET_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
