#pragma once
// What in a host shared library runs when the dynamic loader maps it, before the program that loads
// it gets control back: constructors (.init_array, .preinit_array, legacy .ctors), code placed in
// .init (reached through DT_INIT), and ifunc resolvers (STT_GNU_IFUNC symbols, resolved through
// IRELATIVE relocations). The simulator's candidate libraries may have none beyond what the toolchain
// itself puts into every library, measured on an empty one.
#include <cstddef>
#include <span>
#include <string>

#include "cuset/common/expected.hpp"

namespace cuset {

struct LoadTimeCode {
  std::size_t initArrayBytes = 0;     // .init_array (DT_INIT_ARRAYSZ)
  std::size_t preinitArrayBytes = 0;  // .preinit_array (DT_PREINIT_ARRAYSZ)
  std::size_t ctorsBytes = 0;         // .ctors
  std::size_t initBytes = 0;          // the .init section's code (DT_INIT)
  std::size_t ifuncSymbols = 0;       // STT_GNU_IFUNC in .symtab or .dynsym
  std::size_t irelativeRelocations = 0;
};

// Reads a 64-bit ELF shared library; every offset is bounds-checked (a corrupt file is an error).
Expected<LoadTimeCode> inspectLoadTimeCode(std::span<const std::byte> image);

// What `library` runs at load time beyond `baseline` (an empty library of the same toolchain), in
// words ("code in the .init section, an ifunc resolver"), or empty when nothing.
std::string extraLoadTimeCode(const LoadTimeCode& library, const LoadTimeCode& baseline);

}  // namespace cuset
