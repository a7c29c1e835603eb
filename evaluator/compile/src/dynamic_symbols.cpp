#include "cuset/evaluator/compile/dynamic_symbols.hpp"

#include "elf_image.hpp"

namespace cuset {

Expected<DynamicSymbols> readDynamicSymbols(std::span<const std::byte> image) {
  auto elf = detail::ElfImage::parse(image);
  if (!elf) return Unexpected{elf.error()};
  const auto& sections = elf->sections();
  DynamicSymbols out;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNSYM && s.sh_type != SHT_DYNAMIC) continue;
    if (s.sh_link >= sections.size()) return Unexpected{"ELF dynamic string table is missing"};
    const Elf64_Shdr& strings = sections[s.sh_link];
    if (s.sh_type == SHT_DYNSYM) {
      for (std::uint64_t off = sizeof(Elf64_Sym); s.sh_entsize && off + sizeof(Elf64_Sym) <= s.sh_size; off += s.sh_entsize) {
        Elf64_Sym sym{};
        if (!elf->readAt(s.sh_offset + off, sym)) return Unexpected{"ELF symbol table is truncated"};
        const auto binding = ELF64_ST_BIND(sym.st_info);
        const std::string_view name = elf->stringAt(strings, sym.st_name);
        if (name.empty() || (binding != STB_GLOBAL && binding != STB_WEAK && binding != STB_GNU_UNIQUE)) continue;
        if (sym.st_shndx != SHN_UNDEF) {
          out.defined.emplace_back(name);
        } else if (binding != STB_WEAK) {
          out.undefined.emplace_back(name);
        }
      }
    } else {
      for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn{};
        if (!elf->readAt(s.sh_offset + off, dyn)) return Unexpected{"ELF dynamic section is truncated"};
        if (dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_NEEDED) out.needed.emplace_back(elf->stringAt(strings, dyn.d_un.d_val));
      }
    }
  }
  return out;
}

}  // namespace cuset
