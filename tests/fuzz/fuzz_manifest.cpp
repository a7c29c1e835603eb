// Launch manifests (and the size expressions inside them) against a fixed problem: parse, then
// resolve for concrete sizes; errors are cuset::Error or an Expected's message, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/candidate/launch_manifest.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"

namespace {

const cuset::Problem& problem() {
  static const cuset::Problem p = cuset::parseProblem(
      "name: f\nlevel: 1\nsizes: {small: {M: 64, N: 1000}}\ninputs: {x: {dtype: float32, shape: [M, N]}}\n"
      "outputs: {y: {dtype: float32, shape: [M, N]}}\nreference: |\n  def forward(x: Tensor) -> Tensor:\n      return x\n",
      "f/problem.yaml", "f");
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto manifest = cuset::parseLaunchManifest(text, problem());
    if (manifest) (void)cuset::resolveLaunches(*manifest, problem().sizes("small"));
  } catch (const cuset::Error&) {
  }
  return 0;
}
