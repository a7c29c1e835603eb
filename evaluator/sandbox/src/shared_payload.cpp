#include "cuset/evaluator/sandbox/shared_payload.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "cuset/common/error.hpp"

namespace cuset::sandbox {
namespace {

// Growth in steps of at least this much, so a run of slowly growing regions does not remap every time.
constexpr std::size_t kGrowthStep = std::size_t{2} << 20;

std::size_t fileSize(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw makeError("sandbox shared payload: fstat failed: {}", std::strerror(errno));
  return static_cast<std::size_t>(st.st_size);
}

}  // namespace

SharedPayload SharedPayload::create() {
  const int fd = ::memfd_create("cuset-payload", MFD_CLOEXEC);
  if (fd < 0) throw makeError("sandbox shared payload: memfd_create failed: {}", std::strerror(errno));
  return SharedPayload(fd);
}

SharedPayload SharedPayload::adopt(int fd) {
  if (::fcntl(fd, F_GETFD) < 0) throw makeError("sandbox shared payload: descriptor {} is not open", fd);
  return SharedPayload(fd);
}

SharedPayload::SharedPayload(SharedPayload&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), data_(std::exchange(other.data_, nullptr)), mapped_(std::exchange(other.mapped_, 0)) {}

SharedPayload& SharedPayload::operator=(SharedPayload&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

SharedPayload::~SharedPayload() { release(); }

void SharedPayload::release() {
  if (data_) ::munmap(data_, mapped_ + kGuardGapBytes);
  data_ = nullptr;
  mapped_ = 0;
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

void SharedPayload::mapWhole(std::size_t fileBytes) {
  if (data_) ::munmap(std::exchange(data_, nullptr), std::exchange(mapped_, 0) + kGuardGapBytes);
  // Address space for the file and an inaccessible gap after it, so that a kernel writing far past
  // its region faults instead of landing in whatever mapping the kernel placed next.
  void* reserved = ::mmap(nullptr, fileBytes + kGuardGapBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  void* p = reserved == MAP_FAILED ? MAP_FAILED : ::mmap(reserved, fileBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    if (reserved != MAP_FAILED) ::munmap(reserved, fileBytes + kGuardGapBytes);
    throw makeError("sandbox shared payload: cannot map {} bytes: {} (is the memory limit too low for this region?)", fileBytes,
                    std::strerror(error));
  }
  data_ = static_cast<std::byte*>(p);
  mapped_ = fileBytes;
}

std::span<std::byte> SharedPayload::reserve(std::size_t size) {
  if (size == 0) return {};
  if (size > mapped_) {
    std::size_t bytes = fileSize(fd_);
    if (bytes < size) {
      bytes = std::max(size, std::max(kGrowthStep, bytes + bytes / 2));
      if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
        throw makeError("sandbox shared payload: cannot grow to {} bytes: {}", bytes, std::strerror(errno));
      }
    }
    mapWhole(bytes);
  }
  return {data_, size};
}

std::span<std::byte> SharedPayload::view(std::size_t size) {
  if (size == 0) return {};
  if (size > mapped_) {
    const std::size_t bytes = fileSize(fd_);
    if (bytes < size) throw makeError("sandbox protocol: a message claims {} shared bytes but the shared file holds {}", size, bytes);
    mapWhole(bytes);
  }
  return {data_, size};
}

}  // namespace cuset::sandbox
