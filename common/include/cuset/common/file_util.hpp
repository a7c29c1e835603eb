#pragma once
#include <filesystem>
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

// Writes all of `data` to `fd`, retrying short writes and EINTR; throws cuset::Error naming `path`.
void writeAll(int fd, std::string_view data, const std::filesystem::path& path);

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

// Host name, for run records.
std::string hostName();

}  // namespace cuset
