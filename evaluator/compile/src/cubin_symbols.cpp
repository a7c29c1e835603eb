#include "cuset/evaluator/compile/cubin_symbols.hpp"

#include <elf.h>

#include <cstring>
#include <regex>

namespace cuset {
namespace {

constexpr unsigned char kCudaEntryFlag = 0x10;  // STO_CUDA_ENTRY

template <class T>
bool readAt(std::span<const std::byte> image, std::uint64_t offset, T& out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return true;
}

}  // namespace

Expected<std::vector<std::string>> cubinKernelNames(std::span<const std::byte> image) {
  Elf64_Ehdr header{};
  if (!readAt(image, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    return Unexpected{"not a 64-bit ELF cubin"};
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return Unexpected{"cubin has an unexpected section header size"};
  std::vector<std::string> names;
  for (std::uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section{};
    if (!readAt(image, header.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), section)) return Unexpected{"cubin section table is truncated"};
    if (section.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strings{};
    if (!readAt(image, header.e_shoff + std::uint64_t{section.sh_link} * sizeof(Elf64_Shdr), strings)) {
      return Unexpected{"cubin string table is missing"};
    }
    if (strings.sh_offset > image.size() || image.size() - strings.sh_offset < strings.sh_size) return Unexpected{"cubin string table is truncated"};
    const std::size_t count = section.sh_entsize ? section.sh_size / section.sh_entsize : 0;
    for (std::size_t s = 0; s < count; ++s) {
      Elf64_Sym sym{};
      if (!readAt(image, section.sh_offset + s * sizeof(Elf64_Sym), sym)) return Unexpected{"cubin symbol table is truncated"};
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || (sym.st_other & kCudaEntryFlag) == 0) continue;
      if (sym.st_name >= strings.sh_size) return Unexpected{"cubin symbol name out of range"};
      const char* begin = reinterpret_cast<const char*>(image.data() + strings.sh_offset + sym.st_name);
      const std::size_t maxLen = strings.sh_size - sym.st_name;
      names.emplace_back(begin, strnlen(begin, maxLen));
    }
  }
  return names;
}

Expected<std::map<std::string, std::size_t>> elfSectionSizes(std::span<const std::byte> image) {
  Elf64_Ehdr header{};
  if (!readAt(image, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    return Unexpected{"not a 64-bit ELF image"};
  }
  Elf64_Shdr names{};
  if (!readAt(image, header.e_shoff + std::uint64_t{header.e_shstrndx} * sizeof(Elf64_Shdr), names) || names.sh_offset > image.size() ||
      image.size() - names.sh_offset < names.sh_size) {
    return Unexpected{"ELF section names are missing"};
  }
  std::map<std::string, std::size_t> sizes;
  for (std::uint16_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section{};
    if (!readAt(image, header.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), section)) return Unexpected{"ELF section table is truncated"};
    if (section.sh_name >= names.sh_size) continue;
    const char* begin = reinterpret_cast<const char*>(image.data() + names.sh_offset + section.sh_name);
    sizes[std::string(begin, strnlen(begin, names.sh_size - section.sh_name))] = section.sh_size;
  }
  return sizes;
}

Expected<std::map<std::string, std::size_t>> cubinStaticSharedBytes(std::span<const std::byte> image) {
  auto sections = elfSectionSizes(image);
  if (!sections) return sections;
  constexpr std::string_view kPrefix = ".nv.shared.";
  std::map<std::string, std::size_t> sizes;
  for (const auto& [name, size] : *sections) {
    if (name.rfind(kPrefix, 0) == 0) sizes[name.substr(kPrefix.size())] = size;
  }
  return sizes;
}

std::vector<std::string> ptxKernelNames(std::string_view ptx) {
  static const std::regex kEntry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
  std::vector<std::string> names;
  const std::string text(ptx);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kEntry); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

}  // namespace cuset
