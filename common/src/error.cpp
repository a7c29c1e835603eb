#include "cuset/common/error.hpp"

#include <exception>

namespace cuset {

void rethrowWithContext(const std::string& context) {
  try {
    throw;
  } catch (const std::exception& e) {
    throw Error(context + ": " + e.what());
  }
}

}  // namespace cuset
