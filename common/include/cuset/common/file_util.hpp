#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuset {

// Reads a whole file; throws cuset::Error naming the file when it is missing or unreadable.
std::string readFile(const std::filesystem::path& path);
std::vector<std::byte> readBinaryFile(const std::filesystem::path& path);

// Writes via a temporary file in the same directory and rename(2), so readers (and a crash at any
// point) see either the old content or the new one, never a torn file.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);
void writeFileAtomic(const std::filesystem::path& path, const void* data, std::size_t size);

// Moves a finished TEMPORARY to DESTINATION in a content-addressed cache unless a file is already
// there, in which case TEMPORARY is removed and the existing file kept: an entry, once published, is
// never replaced (a sandboxed worker may hold a Landlock rule for that very inode). Returns true when
// this call published it.
bool publishFileOnce(const std::filesystem::path& temporary, const std::filesystem::path& destination);

// Writes all of `data` to `fd`, retrying short writes and EINTR; throws cuset::Error naming `path`.
void writeAll(int fd, std::string_view data, const std::filesystem::path& path);

// `name` as one path component: letters, digits, '-' and '.' kept, anything else '_' (a GPU's name as a
// folder, as KernelBench's results/timing/<hardware>/ are).
std::string pathComponentOf(std::string_view name);

// Now, as records and cache entries stamp themselves: 2026-11-29T16:24:40Z.
std::string utcTimestamp();

// $XDG_CACHE_HOME/cuset, else $HOME/.cache/cuset, else a folder under the system temp directory.
std::filesystem::path defaultCacheDir();

// A fresh folder (mkdtemp) under `parent`, removed with everything in it when this goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::filesystem::path& parent);  // throws cuset::Error naming `parent`
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// An exclusive flock on a file, held for this object's lifetime; the kernel releases it when the
// holder dies, so a killed run never leaves a stale lock.
class FileLock {
 public:
  // Waits for the lock. held() is false when the file cannot be opened.
  explicit FileLock(const std::filesystem::path& path);
  // Takes the lock only if it is free, and then writes `holder` into the file; when another process
  // holds it, nullopt and `holderNow` gets what that process wrote.
  static std::optional<FileLock> tryLock(const std::filesystem::path& path, std::string_view holder, std::string& holderNow);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  bool held() const { return fd_ >= 0; }

 private:
  FileLock() = default;
  int fd_ = -1;
};

// Host name, for run records.
std::string hostName();

}  // namespace cuset
