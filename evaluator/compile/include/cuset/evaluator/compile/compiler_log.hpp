#pragma once
#include <string>

namespace cuset {

// The line of a compiler log a reader needs first: the first line mentioning an error, else the first
// line.
std::string firstErrorLine(const std::string& log);

}  // namespace cuset
