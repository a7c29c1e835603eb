# Where CuSeT's files are at run time (common/include/cuset/common/resources.hpp) and how
# `cmake --install` lays them out (docs/install.md). Two resource files, one per layout:
#   BUILD/cuset-resources.json        the build tree: absolute paths into the checkout and the build
#   PREFIX/share/cuset/resources.json an install: paths relative to PREFIX, so nothing under PREFIX
#                                     names the checkout or the build folder
# External tools (the compiler, CUDA's headers, the Python with torch and torch's headers) are absolute
# in both: they are what the build was configured with, and an install depends on them as a package does.
include(GNUInstallDirs)
set(CUSET_INSTALL_LIBDIR "${CMAKE_INSTALL_LIBDIR}/cuset")
set(CUSET_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/cuset")
set(CUSET_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/cuset")

set(_src "${CMAKE_SOURCE_DIR}")
list(GET CUDAToolkit_INCLUDE_DIRS 0 _cuda_include)
set(_external
  "    \"python\": \"${CUSET_PYTHON}\",\n"
  "    \"cxx\": \"${CMAKE_CXX_COMPILER}\",\n"
  "    \"cuda_include\": \"${_cuda_include}\",\n"
  "    \"torch_include\": \"${TORCH_INSTALL_PREFIX}/include\",\n"
  "    \"python_include\": \"${CUSET_PYTHON_INCLUDE}\"")
string(JOIN "" _external ${_external})

# name -> (build-tree path, install path relative to the prefix)
set(_build_assets "")
set(_install_assets "")
if(CUSET_REPORT_HIGHLIGHTING)
  set(_build_assets ",\n    \"report_assets\": \"${CMAKE_BINARY_DIR}/reports/assets\"")
  set(_install_assets ",\n    \"report_assets\": \"${CUSET_INSTALL_DATADIR}/report-assets\"")
endif()

file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/cuset-resources.json" CONTENT "{
  \"layout\": \"build\",
  \"paths\": {
    \"cuset\": \"$<TARGET_FILE:cuset>\",
${_external},
    \"sim_include\": \"${_src}/evaluator/sim/runtime/include\",
    \"sim_library_dir\": \"$<TARGET_FILE_DIR:cuset_sim>\",
    \"kb_standin_include\": \"${_src}/evaluator/kernelbench/standin/include\",
    \"kb_standin_library\": \"$<TARGET_FILE:cuset_kb_standin>\",
    \"restrict_library\": \"$<TARGET_FILE:cuset_restrict>\",
    \"kb_entry\": \"${_src}/evaluator/kernelbench/python/cuset_kernelbench.py\",
    \"kb_python\": \"${_src}/evaluator/kernelbench/python\",
    \"kb_prompt_script\": \"${_src}/trainer/python/kernelbench_prompt.py\",
    \"problems\": \"${_src}/problems\"${_build_assets}
  }
}
")

file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/install/resources.json" CONTENT "{
  \"layout\": \"installed\",
  \"paths\": {
    \"cuset\": \"${CMAKE_INSTALL_BINDIR}/cuset\",
${_external},
    \"sim_include\": \"${CUSET_INSTALL_INCLUDEDIR}/sim\",
    \"sim_library_dir\": \"${CUSET_INSTALL_LIBDIR}\",
    \"kb_standin_include\": \"${CUSET_INSTALL_INCLUDEDIR}/kernelbench-standins\",
    \"kb_standin_library\": \"${CUSET_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:cuset_kb_standin>\",
    \"restrict_library\": \"${CUSET_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:cuset_restrict>\",
    \"kb_entry\": \"${CUSET_INSTALL_DATADIR}/python/kernelbench/cuset_kernelbench.py\",
    \"kb_python\": \"${CUSET_INSTALL_DATADIR}/python/kernelbench\",
    \"kb_prompt_script\": \"${CUSET_INSTALL_DATADIR}/python/prompts/kernelbench_prompt.py\",
    \"problems\": \"${CUSET_INSTALL_DATADIR}/problems\"${_install_assets}
  }
}
")

# The executable finds libcuset_sim.so beside its install, and LibTorch and NVRTC where the build found
# them (LibTorch's own libraries find the CUDA ones they need through their own run paths). Named
# explicitly: CMake's link-path option leaves out whatever lies inside the checkout, as its .venv does.
get_filename_component(_cuset_nvrtc_dir "${_cuset_nvrtc_location}" DIRECTORY)
set_target_properties(cuset PROPERTIES INSTALL_RPATH "$ORIGIN/../${CUSET_INSTALL_LIBDIR};${TORCH_INSTALL_PREFIX}/lib;${_cuset_nvrtc_dir}")
install(TARGETS cuset RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cuset)
install(TARGETS cuset_sim cuset_restrict LIBRARY DESTINATION ${CUSET_INSTALL_LIBDIR} COMPONENT cuset)
install(TARGETS cuset_kb_standin ARCHIVE DESTINATION ${CUSET_INSTALL_LIBDIR} COMPONENT cuset)
install(FILES "${CMAKE_BINARY_DIR}/install/resources.json" DESTINATION ${CUSET_INSTALL_DATADIR} COMPONENT cuset)
install(DIRECTORY "${_src}/evaluator/sim/runtime/include/" DESTINATION ${CUSET_INSTALL_INCLUDEDIR}/sim COMPONENT cuset)
install(DIRECTORY "${_src}/evaluator/kernelbench/standin/include/" DESTINATION ${CUSET_INSTALL_INCLUDEDIR}/kernelbench-standins COMPONENT cuset)
install(DIRECTORY "${_src}/evaluator/kernelbench/python/" DESTINATION ${CUSET_INSTALL_DATADIR}/python/kernelbench COMPONENT cuset
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES "${_src}/trainer/python/kernelbench_prompt.py" DESTINATION ${CUSET_INSTALL_DATADIR}/python/prompts COMPONENT cuset)
install(DIRECTORY "${_src}/problems/" DESTINATION ${CUSET_INSTALL_DATADIR}/problems COMPONENT cuset)
install(DIRECTORY "${_src}/configs/" DESTINATION ${CUSET_INSTALL_DATADIR}/configs COMPONENT cuset)
if(CUSET_REPORT_HIGHLIGHTING)
  install(FILES "${CMAKE_BINARY_DIR}/reports/assets/report-assets.js" "${CMAKE_BINARY_DIR}/reports/assets/report-assets.css"
          DESTINATION ${CUSET_INSTALL_DATADIR}/report-assets COMPONENT cuset)
endif()
install(FILES "${_src}/README.md" DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cuset)
install(DIRECTORY "${_src}/docs/" DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT cuset)

# `cpack -G DEB` in the build folder: a .deb of the same install. It depends on what the build was
# configured with outside the package (the Python environment with torch, the CUDA toolkit's headers
# and NVRTC, a C++ compiler for the simulator's host builds), named in its description.
set(CPACK_PACKAGE_NAME "cuset")
set(CPACK_PACKAGE_VENDOR "CuSeT")
set(CPACK_PACKAGE_CONTACT "CuSeT maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CuSeT: judge, time and train CUDA kernel writers (KernelBench-compatible)")
get_filename_component(_cuda_root "${_cuda_include}" DIRECTORY)
set(CPACK_PACKAGE_DESCRIPTION "Runs with the Python environment it was built against (${CUSET_PYTHON}) and the CUDA toolkit at ${_cuda_root}")
set(CPACK_PACKAGING_INSTALL_PREFIX "/opt/cuset")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++, libboost-context1.74.0, libseccomp2, libyaml-cpp0.7, libcurl4, libfmt9, libxxhash0, libcpp-httplib0.11, libhiredis0.14, libicu72")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
include(CPack)
