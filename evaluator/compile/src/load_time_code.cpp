#include "cuset/evaluator/compile/load_time_code.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "elf_image.hpp"

namespace cuset {

Expected<LoadTimeCode> inspectLoadTimeCode(std::span<const std::byte> image) {
  auto elf = detail::ElfImage::parse(image);
  if (!elf) return Unexpected{elf.error()};
  LoadTimeCode code;
  for (const auto& s : elf->sections()) {
    const std::string_view name = elf->sectionName(s);
    if (name == ".init_array" || s.sh_type == SHT_INIT_ARRAY) code.initArrayBytes += s.sh_size;
    if (name == ".preinit_array" || s.sh_type == SHT_PREINIT_ARRAY) code.preinitArrayBytes += s.sh_size;
    if (name == ".ctors") code.ctorsBytes += s.sh_size;
    if (name == ".init") code.initBytes += s.sh_size;
    if (s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) {
      for (std::uint64_t off = 0; s.sh_entsize && off + sizeof(Elf64_Sym) <= s.sh_size; off += s.sh_entsize) {
        Elf64_Sym sym{};
        if (!elf->readAt(s.sh_offset + off, sym)) return Unexpected{"ELF symbol table is truncated"};
        if (ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC) ++code.ifuncSymbols;
      }
    }
    if (s.sh_type == SHT_RELA) {
      for (std::uint64_t off = 0; s.sh_entsize && off + sizeof(Elf64_Rela) <= s.sh_size; off += s.sh_entsize) {
        Elf64_Rela rel{};
        if (!elf->readAt(s.sh_offset + off, rel)) return Unexpected{"ELF relocations are truncated"};
        if (ELF64_R_TYPE(rel.r_info) == R_X86_64_IRELATIVE) ++code.irelativeRelocations;
      }
    }
    if (s.sh_type == SHT_DYNAMIC) {
      // The loader follows the dynamic section, not the section names: count its sizes too.
      for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn{};
        if (!elf->readAt(s.sh_offset + off, dyn)) return Unexpected{"ELF dynamic section is truncated"};
        if (dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_INIT_ARRAYSZ) code.initArrayBytes = std::max<std::size_t>(code.initArrayBytes, dyn.d_un.d_val);
        if (dyn.d_tag == DT_PREINIT_ARRAYSZ) code.preinitArrayBytes = std::max<std::size_t>(code.preinitArrayBytes, dyn.d_un.d_val);
      }
    }
  }
  return code;
}

std::string extraLoadTimeCode(const LoadTimeCode& library, const LoadTimeCode& baseline) {
  std::vector<std::string> found;
  if (library.initArrayBytes > baseline.initArrayBytes || library.ctorsBytes > baseline.ctorsBytes) {
    found.emplace_back("a constructor: a namespace-scope object with one, or a constructor function");
  }
  if (library.preinitArrayBytes > baseline.preinitArrayBytes) found.emplace_back("a .preinit_array entry");
  if (library.initBytes > baseline.initBytes) found.emplace_back("code in the .init section");
  if (library.ifuncSymbols > baseline.ifuncSymbols || library.irelativeRelocations > baseline.irelativeRelocations) {
    found.emplace_back("an ifunc resolver");
  }
  std::string out;
  for (const auto& f : found) out += (out.empty() ? "" : ", ") + f;
  return out;
}

}  // namespace cuset
