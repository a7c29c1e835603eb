// Size expressions: parse, print, evaluate with bindings; overflow and division by zero are errors.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cuset/common/error.hpp"
#include "cuset/evaluator/problem/int_expr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto e = cuset::IntExpr::parse(text);
    if (!e) return 0;
    (void)e->text();
    (void)e->evaluate({{"M", 64}, {"N", 1000}, {"K", 1}, {"B", 0}});
  } catch (const cuset::Error&) {
  }
  return 0;
}
