#pragma once
// The bulk bytes of supervisor-worker messages (a device region, a kernel image) in a memory file that
// both processes map, so that they never cross the pipe. At `full` sizes a region is several GB; through
// a pipe it was copied twice per direction per trial in 64 KiB pieces, and the worker kept extra copies.
// With the shared file the supervisor copies the region in once, the worker runs the kernel on it in
// place (the sim child and cuMemcpy read and write the mapping itself), and the supervisor copies it
// out once.
//
// The supervisor creates the file and hands it to each worker it starts as a descriptor; either side
// grows it when it needs more room (never shrinks it: the peer may map the old length). A message that
// uses it says so in its frame, so the bytes are valid until the next message on that channel.
#include <cstddef>
#include <span>

namespace cuset::sandbox {

class SharedPayload {
 public:
  // A new anonymous memory file (memfd_create). Throws cuset::Error when the kernel offers none.
  static SharedPayload create();
  // The file handed to this process as descriptor `fd` (a worker's side); takes ownership of `fd`.
  static SharedPayload adopt(int fd);

  SharedPayload(SharedPayload&& other) noexcept;
  SharedPayload& operator=(SharedPayload&& other) noexcept;
  SharedPayload(const SharedPayload&) = delete;
  SharedPayload& operator=(const SharedPayload&) = delete;
  ~SharedPayload();

  int fd() const { return fd_; }
  // Bytes [0, size) to write into, growing the file first when it is shorter.
  std::span<std::byte> reserve(std::size_t size);
  // Bytes [0, size) as the peer wrote them. Throws when the file is shorter than `size`.
  std::span<std::byte> view(std::size_t size);
  // Bytes mapped now (the file's length): room beyond a message's bytes that a sandboxed child must not
  // reach. The mapping is followed by kGuardGapBytes of inaccessible address space.
  std::size_t mappedBytes() const { return mapped_; }
  static constexpr std::size_t kGuardGapBytes = std::size_t{64} << 20;
  // True when `bytes` lies at the start of this mapping (a reply written in place).
  bool holds(std::span<const std::byte> bytes) const { return !bytes.empty() && bytes.data() == data_ && bytes.size() <= mapped_; }

 private:
  explicit SharedPayload(int fd) : fd_(fd) {}
  void mapWhole(std::size_t fileBytes);
  void release();

  int fd_ = -1;
  std::byte* data_ = nullptr;
  std::size_t mapped_ = 0;
};

}  // namespace cuset::sandbox
