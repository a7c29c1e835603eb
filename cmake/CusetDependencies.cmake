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

# The project's one Python interpreter (DESIGN §1): the environment scripts/install-deps.sh makes in
# the checkout (.venv), unless CUSET_PYTHON (cache variable, or the environment variable of that name at
# the first configure) names another. Tests, benchmarks and the cuset binary (as its default; the
# CUSET_PYTHON environment variable overrides it at run time) all start this one.
if(DEFINED ENV{CUSET_PYTHON} AND NOT "$ENV{CUSET_PYTHON}" STREQUAL "")
  set(_cuset_python_default "$ENV{CUSET_PYTHON}")
else()
  set(_cuset_python_default "${CMAKE_SOURCE_DIR}/.venv/bin/python")
endif()
set(CUSET_PYTHON "${_cuset_python_default}" CACHE FILEPATH "The Python interpreter (with torch) that every Python process of the project uses")
if(NOT EXISTS "${CUSET_PYTHON}")
  message(FATAL_ERROR "CuSeT: no Python at ${CUSET_PYTHON}. Run `bash scripts/install-deps.sh` (it makes the pinned environment at "
                      "${CMAKE_SOURCE_DIR}/.venv), or set CUSET_PYTHON to an interpreter that has torch 2.x.")
endif()
message(STATUS "CuSeT: Python ${CUSET_PYTHON}")
# Python.h's folder, which torch/extension.h needs (the recorder checks host builds against torch's real headers).
execute_process(COMMAND "${CUSET_PYTHON}" -c "import sysconfig; print(sysconfig.get_paths()['include'], end='')"
                OUTPUT_VARIABLE CUSET_PYTHON_INCLUDE RESULT_VARIABLE _cuset_python_include_status)

# LibTorch: the one inside that Python's torch (PyPI's CUDA build, which also builds and runs on a
# machine without a GPU), unless -DTorch_DIR points at a user's own LibTorch 2.x.
if(NOT Torch_DIR)
  execute_process(COMMAND "${CUSET_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path, end='')"
                  OUTPUT_VARIABLE _cuset_torch_prefix ERROR_VARIABLE _cuset_torch_error RESULT_VARIABLE _cuset_torch_status)
  if(NOT _cuset_torch_status EQUAL 0)
    message(FATAL_ERROR "CuSeT: ${CUSET_PYTHON} cannot import torch (${_cuset_torch_error}). Run `bash scripts/install-deps.sh`, "
                        "or pass -DTorch_DIR=/path/to/libtorch/share/cmake/Torch.")
  endif()
  set(Torch_DIR "${_cuset_torch_prefix}/Torch" CACHE PATH "LibTorch's CMake package (default: the one in CUSET_PYTHON's torch)")
endif()
# Torch's CMake config appends its flags to CMAKE_CXX_FLAGS; we keep them on the torch-facing target only.
set(_cuset_saved_cxx_flags "${CMAKE_CXX_FLAGS}")
# CUDA LibTorch configs of some 2.x releases ask for NVTX 2 (CUDA::nvToolsExt), which CUDA 12.9+ no
# longer ships; its header-only successor serves (pytorch/pytorch#152756). No effect on a CPU LibTorch.
if(TARGET CUDA::nvtx3 AND NOT TARGET CUDA::nvToolsExt)
  add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
endif()
# A CUDA LibTorch's config compiles and runs a GPU probe to choose nvcc architecture flags unless it is
# told them. This project compiles no CUDA with LibTorch's flags (candidates go through NVRTC), and the
# probe cannot build under C++20 with CMake 3.25: name the architectures instead (Hopper by default).
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch 2.4 REQUIRED)  # autocast's per-device API (2.4); SDPA (2.0)
set(CMAKE_CXX_FLAGS "${_cuset_saved_cxx_flags}")
message(STATUS "CuSeT: LibTorch ${Torch_VERSION} from ${Torch_DIR}")

# A pip torch's CUDA libraries (cuDNN, NCCL, cuBLAS, the CUDA runtime, NVRTC, ...) are NVIDIA's wheels
# beside it (site-packages/nvidia/*/lib), newer than or equal to the toolkit's. LibTorch needs those,
# not the toolkit's copies of the same sonames (the toolkit's NCCL lacks symbols it links), and a
# process holds one library per soname: so they come first, when linking (for LibTorch's own
# dependencies) and in every binary's run path. NVRTC is then the torch wheel's too (same major).
cmake_path(GET TORCH_INSTALL_PREFIX PARENT_PATH _cuset_site_packages)
file(GLOB CUSET_TORCH_CUDA_LIBRARY_DIRS LIST_DIRECTORIES true "${_cuset_site_packages}/nvidia/*/lib")
if(CUSET_TORCH_CUDA_LIBRARY_DIRS)
  list(JOIN CUSET_TORCH_CUDA_LIBRARY_DIRS ":" _cuset_torch_cuda_path)
  # On LibTorch's target, so that only what links LibTorch gets them (not libcuset_sim.so, say).
  set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_cuset_torch_cuda_path}"
                                                                 "LINKER:-rpath,${_cuset_torch_cuda_path}")
  message(STATUS "CuSeT: CUDA libraries from the torch wheel first: ${_cuset_torch_cuda_path}")
endif()

# A pip torch ships fmt's headers (a newer fmt than Debian's libfmt) in the include folder every
# LibTorch-facing target gets as a system path, ahead of /usr/include: such a file would compile
# against one fmt and link another. A plain -I folder that holds only the libfmt headers comes first.
get_target_property(_cuset_fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
find_path(CUSET_FMT_HEADERS fmt/format.h HINTS ${_cuset_fmt_includes} NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH)
set(_cuset_fmt_shim "${CMAKE_BINARY_DIR}/cuset-fmt-include")
file(MAKE_DIRECTORY "${_cuset_fmt_shim}")
file(CREATE_LINK "${CUSET_FMT_HEADERS}/fmt" "${_cuset_fmt_shim}/fmt" SYMBOLIC)
include_directories(BEFORE "${_cuset_fmt_shim}")

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

# libseccomp: the system-call allow-list of sandboxed simulator workers, and the recorder's filter (libcuset_restrict).
find_path(SECCOMP_INCLUDE_DIR seccomp.h REQUIRED)
find_library(SECCOMP_LIBRARY seccomp REQUIRED)

if(CUSET_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(CUSET_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
