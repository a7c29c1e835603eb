add_library(cuset_warnings INTERFACE)
target_compile_options(cuset_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                       -Wno-missing-field-initializers)
# GCC 12 reports -Wrestrict inside std::string at -O3 where none exists (GCC bug 105329).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(cuset_warnings INTERFACE -Wno-restrict)
endif()
