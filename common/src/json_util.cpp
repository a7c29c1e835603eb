#include "cuset/common/json_util.hpp"

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"

namespace cuset {

nlohmann::json parseJson(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw makeError("{}: invalid JSON at byte {}: {}", source, e.byte, e.what());
  }
}

nlohmann::json readJsonFile(const std::filesystem::path& path) {
  return parseJson(readFile(path), path.string());
}

void writeJsonFileAtomic(const std::filesystem::path& path, const nlohmann::json& value) {
  writeFileAtomic(path, value.dump(2) + "\n");
}

}  // namespace cuset
