#pragma once
// A libseccomp filter context, released however the code that builds it leaves: the sim worker's
// allow-lists (sandbox_worker.cpp) and the recorder's deny-list (restrict/restrict_child.cpp).
#include <seccomp.h>

#include <memory>
#include <type_traits>

namespace cuset::detail {

struct SeccompRelease {
  void operator()(std::remove_pointer_t<scmp_filter_ctx>* ctx) const { seccomp_release(ctx); }
};
using SeccompContext = std::unique_ptr<std::remove_pointer_t<scmp_filter_ctx>, SeccompRelease>;

}  // namespace cuset::detail
