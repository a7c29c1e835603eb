#include "cuset/common/json_util.hpp"

#include <fstream>

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

void forEachJsonlLine(const std::filesystem::path& path, std::string_view what,
                      const std::function<void(const std::string& line, const std::string& where)>& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw makeError("{}: cannot open {}", path.string(), what);
  std::string line;
  std::size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    visit(line, fmt::format("{}:{}", path.string(), lineNo));
  }
  if (in.bad()) throw makeError("{}: read failed", path.string());
}

void writeJsonFileAtomic(const std::filesystem::path& path, const nlohmann::json& value) {
  writeFileAtomic(path, value.dump(2) + "\n");
}

}  // namespace cuset
