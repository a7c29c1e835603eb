#include "cuset/evaluator/compile/compiler_log.hpp"

namespace cuset {

std::string firstErrorLine(const std::string& log) {
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(start, end - start);
    if (line.find("error") != std::string::npos) return line;
    start = end + 1;
  }
  return log.empty() ? "the compiler rejected the source without a message" : log.substr(0, log.find('\n'));
}

}  // namespace cuset
