#include "elf_image.hpp"

namespace cuset::detail {
namespace {

bool inside(std::span<const std::byte> image, const Elf64_Shdr& s) {
  return s.sh_type == SHT_NOBITS || (s.sh_offset <= image.size() && image.size() - s.sh_offset >= s.sh_size);
}

}  // namespace

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

}  // namespace cuset::detail
