#pragma once
// A bounds-checked view of a 64-bit ELF file's section table, shared by the readers of candidate
// libraries (load_time_code.cpp, dynamic_symbols.cpp): every offset a corrupt file could carry is
// checked before it is read.
#include <elf.h>

#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "cuset/common/expected.hpp"

namespace cuset::detail {

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

}  // namespace cuset::detail
