#pragma once
// Where CuSeT's own files are at run time: the recorder's Python, the headers and libraries candidate
// code is built against, report assets, the bundled problems, and the interpreter and compilers the
// build was configured with. Nothing is compiled in: an executable finds a resource file beside it,
// PREFIX/share/cuset/resources.json after `cmake --install` (paths relative to PREFIX), or the build
// tree's cuset-resources.json in its folder or one of the two above it (absolute paths), or the file
// named by $CUSET_RESOURCES. So an installed `cuset` names neither the checkout nor the build folder
// (docs/install.md).
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace cuset {

class Resources {
 public:
  // Reads a resource file; throws cuset::Error naming the file and what is wrong with it.
  static Resources load(const std::filesystem::path& file);

  // The path named `key` (absolute); throws cuset::Error naming the key and the resource file.
  std::filesystem::path path(std::string_view key) const;
  // An optional one: empty when the file does not have it (report assets without highlight.js).
  std::filesystem::path pathIfAny(std::string_view key) const;
  const std::filesystem::path& file() const { return file_; }
  bool installed() const { return installed_; }  // an install's file, not a build tree's

 private:
  std::filesystem::path file_;
  bool installed_ = false;
  std::map<std::string, std::filesystem::path, std::less<>> paths_;
};

// This process's resources, found once (see above); throws cuset::Error listing where it looked.
const Resources& resources();
// The running executable (/proc/self/exe); throws cuset::Error when it cannot be read.
std::filesystem::path executablePath();
// `problems` in the working directory when there is one (a checkout), else the installed suite.
std::filesystem::path defaultProblemsDir();

}  // namespace cuset
