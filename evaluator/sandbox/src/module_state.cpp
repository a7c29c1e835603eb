#include "module_state.hpp"

#include <elf.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace cuset::detail {
namespace {

template <class T>
bool readAt(std::span<const std::byte> image, std::uint64_t offset, T& out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, image.data() + offset, sizeof(T));
  return true;
}

}  // namespace

Expected<std::vector<WritableRange>> writableRanges(std::span<const std::byte> elf) {
  Elf64_Ehdr header{};
  if (!readAt(elf, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    return Unexpected{"not a 64-bit ELF library"};
  }
  if (header.e_phentsize != sizeof(Elf64_Phdr)) return Unexpected{"unexpected ELF program header size"};
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  for (std::uint16_t i = 0; i < header.e_phnum; ++i) {
    if (!readAt(elf, header.e_phoff + std::uint64_t{i} * sizeof(Elf64_Phdr), segments[i])) return Unexpected{"ELF program headers are truncated"};
  }
  std::uint64_t relroBegin = 0, relroEnd = 0;
  for (const auto& p : segments) {
    if (p.p_type == PT_GNU_RELRO) relroBegin = p.p_vaddr, relroEnd = p.p_vaddr + p.p_memsz;
  }
  std::vector<WritableRange> ranges;
  constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 32;  // a library's globals, not a file's claim
  for (const auto& p : segments) {
    if (p.p_type != PT_LOAD || (p.p_flags & PF_W) == 0 || p.p_memsz > kMaxBytes) continue;
    std::uint64_t begin = p.p_vaddr, end = p.p_vaddr + p.p_memsz;
    // RELRO is made read-only after relocation and holds nothing a kernel can change.
    if (relroEnd > begin && relroBegin < end) {
      if (relroBegin <= begin)
        begin = std::min(end, relroEnd);
      else
        end = relroBegin;  // RELRO sits at the start of the data segment; anything before it stays
    }
    if (end > begin) ranges.push_back({begin, end - begin});
  }
  return ranges;
}

ModuleState::ModuleState(std::vector<WritableRange> ranges) : ranges_(std::move(ranges)) {
  for (const auto& r : ranges_) bytes_ += r.bytes;
  void* p = ::mmap(nullptr, sizeof(Header) + bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("cannot map memory for a kernel library's state");
  shared_ = static_cast<Header*>(p);
  shared_->valid = 0;
}

ModuleState::~ModuleState() {
  if (shared_) ::munmap(shared_, sizeof(Header) + bytes_);
}

ModuleState::ModuleState(ModuleState&& other) noexcept
    : ranges_(std::move(other.ranges_)), bytes_(std::exchange(other.bytes_, 0)), shared_(std::exchange(other.shared_, nullptr)) {}

ModuleState& ModuleState::operator=(ModuleState&& other) noexcept {
  if (this != &other) {
    if (shared_) ::munmap(shared_, sizeof(Header) + bytes_);
    ranges_ = std::move(other.ranges_);
    bytes_ = std::exchange(other.bytes_, 0);
    shared_ = std::exchange(other.shared_, nullptr);
  }
  return *this;
}

bool ModuleState::valid() const { return shared_ && shared_->valid != 0; }

void ModuleState::restore(std::uintptr_t base) const {
  if (!valid() || shared_->base != base) return;
  const auto* from = reinterpret_cast<const std::byte*>(shared_ + 1);
  for (const auto& r : ranges_) {
    std::memcpy(reinterpret_cast<void*>(base + r.offset), from, r.bytes);
    from += r.bytes;
  }
}

void ModuleState::save(std::uintptr_t base) {
  if (!shared_) return;
  shared_->valid = 0;
  auto* to = reinterpret_cast<std::byte*>(shared_ + 1);
  for (const auto& r : ranges_) {
    std::memcpy(to, reinterpret_cast<const void*>(base + r.offset), r.bytes);
    to += r.bytes;
  }
  shared_->base = base;
  __atomic_store_n(&shared_->valid, 1, __ATOMIC_RELEASE);
}

}  // namespace cuset::detail
