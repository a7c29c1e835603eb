#pragma once
// A shared library's dynamic linking interface, read from its ELF file: the symbols it defines for
// others, the ones it needs from them, and the libraries it names. The simulator links a candidate's
// library against libcuset_sim.so alone and checks what the library still needs against what the
// loader will find (SimCompiler::linkableSymbols), which saves reading the C and C++ runtimes on every link.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset {

struct DynamicSymbols {
  std::vector<std::string> defined;    // global or weak symbols with a definition
  std::vector<std::string> undefined;  // global references the loader must resolve (weak ones may stay unresolved)
  std::vector<std::string> needed;     // DT_NEEDED: the sonames of the libraries it depends on
};

// Reads a 64-bit ELF shared library; every offset is bounds-checked (a corrupt file is an error).
Expected<DynamicSymbols> readDynamicSymbols(std::span<const std::byte> image);

}  // namespace cuset
