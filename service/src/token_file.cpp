#include "cuset/service/token_file.hpp"

#include <sstream>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"

namespace cuset::service {

std::vector<std::string> readBearerTokens(const std::filesystem::path& file) {
  std::vector<std::string> tokens;
  std::istringstream in(readFile(file));
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    tokens.push_back(line.substr(start));
  }
  if (tokens.empty()) throw makeError("{}: no token in it (one bearer token per line)", file.string());
  return tokens;
}

}  // namespace cuset::service
