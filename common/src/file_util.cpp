#include "cuset/common/file_util.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>

#include "cuset/common/error.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// Owns a POSIX file descriptor.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

void writeAll(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw makeError("{}: write failed: {}", path.string(), std::strerror(errno));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!fs::exists(path)) throw makeError("{}: file not found", path.string());
    throw makeError("{}: cannot open for reading: {}", path.string(), std::strerror(errno));
  }
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw makeError("{}: read failed", path.string());
  return content;
}

std::vector<std::byte> readBinaryFile(const fs::path& path) {
  const std::string text = readFile(path);
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

void writeFileAtomic(const fs::path& path, const void* data, std::size_t size) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw makeError("{}: cannot create directory: {}", dir.string(), ec.message());
  std::random_device rd;
  const fs::path tmp = dir / fmt::format(".{}.tmp{:08x}", path.filename().string(), rd());
  FileDescriptor fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) throw makeError("{}: cannot create: {}", tmp.string(), std::strerror(errno));
  try {
    writeAll(fd.get(), std::string_view(static_cast<const char*>(data), size), tmp);
    if (::fsync(fd.get()) != 0) throw makeError("{}: fsync failed: {}", tmp.string(), std::strerror(errno));
    if (::close(fd.release()) != 0) throw makeError("{}: close failed: {}", tmp.string(), std::strerror(errno));
    fs::rename(tmp, path);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
}

void writeFileAtomic(const fs::path& path, std::string_view content) { writeFileAtomic(path, content.data(), content.size()); }

bool publishFileOnce(const fs::path& temporary, const fs::path& destination) {
  // link() fails with EEXIST instead of replacing, which rename() would do.
  const bool linked = ::link(temporary.c_str(), destination.c_str()) == 0;
  if (linked || errno == EEXIST) {
    const bool published = linked;
    std::error_code ec;
    fs::remove(temporary, ec);
    return published;
  }
  // A file system without hard links: the old replacing rename, still atomic.
  fs::rename(temporary, destination);
  return true;
}

std::string pathComponentOf(std::string_view name) {
  std::string out;
  for (const char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return out.empty() || out == "." || out == ".." ? std::string("unnamed") : out;
}

std::string utcTimestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

fs::path defaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "cuset";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "cuset";
  return fs::temp_directory_path() / "cuset-cache";
}

ScratchDir::ScratchDir(const fs::path& parent) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string pattern = (parent / "XXXXXX").string();
  if (ec || ::mkdtemp(pattern.data()) == nullptr) {
    throw makeError("cannot create a scratch folder in {}: {}", parent.string(), ec ? ec.message() : std::strerror(errno));
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

FileLock::FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(std::exchange(fd_, -1));
      return;
    }
  }
}

std::optional<FileLock> FileLock::tryLock(const fs::path& path, std::string_view holder, std::string& holderNow) {
  FileLock lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) throw makeError("{}: cannot open the lock file: {}", path.string(), std::strerror(errno));
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) throw makeError("{}: cannot lock: {}", path.string(), std::strerror(errno));
    char buffer[1024] = {};
    const ssize_t n = ::pread(lock.fd_, buffer, sizeof(buffer) - 1, 0);
    holderNow = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string("another process");
    while (!holderNow.empty() && (holderNow.back() == '\n' || holderNow.back() == ' ')) holderNow.pop_back();
    return std::nullopt;
  }
  if (::ftruncate(lock.fd_, 0) == 0) {
    const std::string text = std::string(holder) + "\n";
    [[maybe_unused]] const ssize_t written = ::pwrite(lock.fd_, text.data(), text.size(), 0);
  }
  return lock;
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string hostName() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace cuset
