#include "cuset/evaluator/compile/cubin_symbols.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
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

// One ELF section: its name and bytes (bounds-checked against the image).
struct Section {
  std::string name;
  Elf64_Shdr header;
  std::span<const std::byte> bytes;
};

Expected<std::vector<Section>> elfSections(std::span<const std::byte> image) {
  Elf64_Ehdr header{};
  if (!readAt(image, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    return Unexpected{"not a 64-bit ELF image"};
  }
  Elf64_Shdr names{};
  if (!readAt(image, header.e_shoff + std::uint64_t{header.e_shstrndx} * sizeof(Elf64_Shdr), names) || names.sh_offset > image.size() ||
      image.size() - names.sh_offset < names.sh_size) {
    return Unexpected{"ELF section names are missing"};
  }
  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < header.e_shnum; ++i) {
    Section s{};
    if (!readAt(image, header.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), s.header)) return Unexpected{"ELF section table is truncated"};
    if (s.header.sh_name < names.sh_size) {
      const char* begin = reinterpret_cast<const char*>(image.data() + names.sh_offset + s.header.sh_name);
      s.name.assign(begin, strnlen(begin, names.sh_size - s.header.sh_name));
    }
    if (s.header.sh_type != SHT_NOBITS) {
      if (s.header.sh_offset > image.size() || image.size() - s.header.sh_offset < s.header.sh_size) {
        return Unexpected{"ELF section " + s.name + " is truncated"};
      }
      s.bytes = image.subspan(s.header.sh_offset, s.header.sh_size);
    }
    sections.push_back(std::move(s));
  }
  return sections;
}

// `.nv.info` attributes: a format byte, an attribute byte, then a 16-bit value (formats 1-3) or a
// 16-bit size and that many bytes (format 4, EIFMT_SVAL).
constexpr std::uint8_t kEifmtSval = 0x04;
constexpr std::uint8_t kEiattrMaxThreads = 0x05;
constexpr std::uint8_t kEiattrFrameSize = 0x11;
constexpr std::uint8_t kEiattrRegcount = 0x2f;

template <class F>
bool forEachAttribute(std::span<const std::byte> info, F&& f) {
  std::size_t p = 0;
  while (p + 4 <= info.size()) {
    const auto format = static_cast<std::uint8_t>(info[p]), attribute = static_cast<std::uint8_t>(info[p + 1]);
    std::uint16_t value = 0;
    std::memcpy(&value, info.data() + p + 2, 2);
    if (format != kEifmtSval) {
      p += 4;
      continue;
    }
    if (info.size() - p - 4 < value) return false;
    f(attribute, info.subspan(p + 4, value));
    p += 4 + std::size_t{value};
  }
  return p == info.size();
}

std::uint32_t word(std::span<const std::byte> data, std::size_t index) {
  std::uint32_t v = 0;
  if (data.size() >= (index + 1) * 4) std::memcpy(&v, data.data() + index * 4, 4);
  return v;
}

}  // namespace

Expected<std::map<std::string, KernelResources>> cubinKernelResources(std::span<const std::byte> image) {
  auto sections = elfSections(image);
  if (!sections) return Unexpected{sections.error()};
  // Symbol index -> name, for the module-wide `.nv.info` attributes that name their function by index.
  std::map<std::uint32_t, std::string> symbols;
  std::map<std::string, KernelResources> kernels;
  for (const Section& s : *sections) {
    if (s.header.sh_type != SHT_SYMTAB) continue;
    if (s.header.sh_link >= sections->size()) return Unexpected{"cubin string table is missing"};
    const std::span<const std::byte> strings = (*sections)[s.header.sh_link].bytes;
    const std::size_t count = s.header.sh_entsize ? s.bytes.size() / s.header.sh_entsize : 0;
    for (std::size_t i = 0; i < count; ++i) {
      Elf64_Sym sym{};
      if (!readAt(s.bytes, i * sizeof(Elf64_Sym), sym)) return Unexpected{"cubin symbol table is truncated"};
      if (sym.st_name >= strings.size()) continue;
      const char* begin = reinterpret_cast<const char*>(strings.data() + sym.st_name);
      std::string name(begin, strnlen(begin, strings.size() - sym.st_name));
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (sym.st_other & kCudaEntryFlag) != 0) kernels[name];
      symbols[static_cast<std::uint32_t>(i)] = std::move(name);
    }
  }
  constexpr std::string_view kShared = ".nv.shared.", kInfo = ".nv.info.";
  for (const Section& s : *sections) {
    if (s.name.rfind(kShared, 0) == 0) {
      if (auto it = kernels.find(s.name.substr(kShared.size())); it != kernels.end()) it->second.staticSharedBytes = s.header.sh_size;
    } else if (s.name == ".nv.info") {
      const bool ok = forEachAttribute(s.bytes, [&](std::uint8_t attribute, std::span<const std::byte> data) {
        if (attribute != kEiattrRegcount && attribute != kEiattrFrameSize) return;
        const auto symbol = symbols.find(word(data, 0));
        if (symbol == symbols.end()) return;
        const auto kernel = kernels.find(symbol->second);
        if (kernel == kernels.end()) return;
        if (attribute == kEiattrRegcount)
          kernel->second.registers = word(data, 1);
        else
          kernel->second.localBytes = word(data, 1);
      });
      if (!ok) return Unexpected{"cubin .nv.info is truncated"};
    } else if (s.name.rfind(kInfo, 0) == 0) {
      const auto kernel = kernels.find(s.name.substr(kInfo.size()));
      if (kernel == kernels.end()) continue;
      const bool ok = forEachAttribute(s.bytes, [&](std::uint8_t attribute, std::span<const std::byte> data) {
        if (attribute == kEiattrMaxThreads) kernel->second.maxThreads = word(data, 0) * std::max(1u, word(data, 1)) * std::max(1u, word(data, 2));
      });
      if (!ok) return Unexpected{"cubin " + s.name + " is truncated"};
    }
  }
  return kernels;
}

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
