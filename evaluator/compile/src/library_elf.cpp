// What a candidate library's ELF file says about loading it: the code that would run when it is
// mapped (load_time_code.hpp) and the symbols it defines and needs (dynamic_symbols.hpp). One
// bounds-checked reader of the section table serves both: every offset a corrupt file could carry is
// checked before it is read.
#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "cuset/evaluator/compile/dynamic_symbols.hpp"
#include "cuset/evaluator/compile/load_time_code.hpp"

namespace cuset {
namespace {

class ElfImage {
 public:
  static Expected<ElfImage> parse(std::span<const std::byte> image);

  const std::vector<Elf64_Shdr>& sections() const { return sections_; }
  std::string_view sectionName(const Elf64_Shdr& section) const { return stringAt(sections_[names_], section.sh_name); }
  // The NUL-terminated string at `offset` of string table `table`; empty when out of bounds.
  std::string_view stringAt(const Elf64_Shdr& table, std::uint64_t offset) const;

  template <class T>
  bool readAt(std::uint64_t offset, T& out) const {
    if (offset > image_.size() || image_.size() - offset < sizeof(T)) return false;
    std::memcpy(&out, image_.data() + offset, sizeof(T));
    return true;
  }

 private:
  std::span<const std::byte> image_;
  std::vector<Elf64_Shdr> sections_;
  std::size_t names_ = 0;  // index of the section-name string table
};

bool inside(std::span<const std::byte> image, const Elf64_Shdr& s) {
  return s.sh_type == SHT_NOBITS || (s.sh_offset <= image.size() && image.size() - s.sh_offset >= s.sh_size);
}

Expected<ElfImage> ElfImage::parse(std::span<const std::byte> image) {
  ElfImage elf;
  elf.image_ = image;
  Elf64_Ehdr header{};
  if (!elf.readAt(0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    return Unexpected{"not a 64-bit ELF image"};
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return Unexpected{"unexpected ELF section header size"};
  elf.sections_.resize(header.e_shnum);
  for (std::uint16_t i = 0; i < header.e_shnum; ++i) {
    if (!elf.readAt(header.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), elf.sections_[i]) || !inside(image, elf.sections_[i])) {
      return Unexpected{"ELF section table is truncated"};
    }
  }
  if (header.e_shstrndx >= elf.sections_.size()) return Unexpected{"ELF section names are missing"};
  elf.names_ = header.e_shstrndx;
  return elf;
}

std::string_view ElfImage::stringAt(const Elf64_Shdr& table, std::uint64_t offset) const {
  if (table.sh_type == SHT_NOBITS || offset >= table.sh_size) return {};
  const char* begin = reinterpret_cast<const char*>(image_.data() + table.sh_offset + offset);
  return {begin, strnlen(begin, table.sh_size - offset)};
}

}  // namespace

Expected<LoadTimeCode> inspectLoadTimeCode(std::span<const std::byte> image) {
  auto elf = ElfImage::parse(image);
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

Expected<DynamicSymbols> readDynamicSymbols(std::span<const std::byte> image) {
  auto elf = ElfImage::parse(image);
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
