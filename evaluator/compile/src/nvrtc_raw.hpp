#pragma once
// One NVRTC compile, as the library does it: the program with the prelude's virtual headers, name
// expressions for the manifest's kernels, the image and the lowered names. Run in a helper process
// (`cuset __nvrtc-worker`, nvrtc_isolation.cpp) by the evaluation, in process by tools and tests.
// Private to the compile stage.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cuset::detail {

struct RawCompile {
  bool ok = false;
  std::string log;
  std::vector<std::byte> image;
  std::map<std::string, std::string> lowered;
};

// Throws cuset::Error when NVRTC itself fails (not for a compile error, which is `ok == false`).
RawCompile runNvrtc(std::string_view source, const std::vector<std::string>& options, const std::vector<std::string>& nameExpressions, bool cubin);

}  // namespace cuset::detail
