#include "cuset/common/resources.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"

namespace fs = std::filesystem;

namespace cuset {

Resources Resources::load(const fs::path& file) {
  const nlohmann::json j = readJsonFile(file);
  if (!j.is_object() || !j.contains("paths") || !j["paths"].is_object()) {
    throw makeError("{}: not a CuSeT resource file (an object with \"paths\" is expected)", file.string());
  }
  Resources r;
  r.file_ = fs::absolute(file);
  r.installed_ = j.value("layout", "") == "installed";
  // An install's paths are relative to its prefix (two folders above share/cuset/resources.json), so the
  // prefix can move; a build tree's are absolute.
  const fs::path base = r.installed_ ? r.file_.parent_path().parent_path().parent_path() : fs::path();
  for (const auto& [key, value] : j["paths"].items()) {
    if (!value.is_string()) throw makeError("{}: paths.{} is not a string", file.string(), key);
    const fs::path p = value.get<std::string>();
    r.paths_[key] = p.is_absolute() || p.empty() ? p : (base / p).lexically_normal();
  }
  return r;
}

fs::path Resources::pathIfAny(std::string_view key) const {
  const auto it = paths_.find(key);
  return it == paths_.end() ? fs::path() : it->second;
}

fs::path Resources::path(std::string_view key) const {
  fs::path p = pathIfAny(key);
  if (p.empty()) throw makeError("{} names no '{}': reinstall CuSeT (cmake --install) or rebuild it", file_.string(), key);
  return p;
}

fs::path executablePath() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw makeError("cannot tell which executable this is (/proc/self/exe: {})", ec.message());
  return self;
}

namespace {

std::optional<fs::path> findResourceFile(std::vector<fs::path>& tried) {
  if (const char* env = std::getenv("CUSET_RESOURCES"); env && *env) {
    tried.emplace_back(env);
    return fs::path(env);
  }
  const fs::path dir = executablePath().parent_path();
  std::vector<fs::path> candidates = {dir / ".." / "share" / "cuset" / "resources.json"};
  for (fs::path d = dir; candidates.size() < 4 && !d.empty(); d = d.parent_path()) {
    candidates.push_back(d / "cuset-resources.json");
    if (d == d.root_path()) break;
  }
  for (const auto& c : candidates) {
    tried.push_back(c.lexically_normal());
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal();
  }
  return std::nullopt;
}

}  // namespace

const Resources& resources() {
  static std::once_flag once;
  static std::optional<Resources> found;
  static std::string failure;
  std::call_once(once, [] {
    std::vector<fs::path> tried;
    try {
      if (auto file = findResourceFile(tried)) {
        found = Resources::load(*file);
        return;
      }
      std::string list;
      for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t.string();
      failure = "cannot find CuSeT's resource file (looked at " + list +
                "): run an installed cuset (cmake --install) or one from its build folder, or set CUSET_RESOURCES to the file";
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!found) throw Error(failure);
  return *found;
}

fs::path defaultProblemsDir() {
  std::error_code ec;
  if (fs::is_directory("problems", ec)) return "problems";
  try {
    if (fs::path installed = resources().pathIfAny("problems"); !installed.empty() && fs::is_directory(installed, ec)) return installed;
  } catch (const std::exception&) {
    // no resources: the relative default, whose absence the caller reports
  }
  return "problems";
}

}  // namespace cuset
