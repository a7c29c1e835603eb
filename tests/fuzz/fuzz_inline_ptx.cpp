// Inline PTX on the simulator: the source rewriter (asm statements in candidate text) and the PTX
// parser (the templates), both fed untrusted text; neither may crash, hang or loop.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuset/evaluator/compile/sim_inline_ptx.hpp"
#include "cuset_sim/ptx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)cuset::rewriteInlinePtx(text);
  (void)cuset_sim::ptx_check(text, 12, true);
  (void)cuset_sim::ptx_check(text, 0, false);
  return 0;
}
