#pragma once
// Bearer tokens in a file: one per line, blank lines and # comments skipped (docs/serve.md "Security").
#include <filesystem>
#include <vector>
#include <string>

namespace cuset::service {

// Every token of the file, in its order; cuset::Error naming the file when it has none or cannot be read.
std::vector<std::string> readBearerTokens(const std::filesystem::path& file);

}  // namespace cuset::service
