#pragma once
// Helpers for the fuzz targets: parsers that read files get the input through an in-memory file, so
// a fuzzing run touches no disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cuset::fuzz {

// /proc/self/fd/N of a memory file holding `data` (the same file every call, rewritten).
inline std::string asFile(const std::uint8_t* data, std::size_t size) {
  static const int fd = [] {
    const int f = ::memfd_create("cuset-fuzz", MFD_CLOEXEC);
    if (f < 0) throw std::runtime_error("memfd_create failed");
    return f;
  }();
  if (::ftruncate(fd, 0) != 0 || (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)))
    throw std::runtime_error("memfd write failed");
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace cuset::fuzz
