// Misaligned accesses, which a GPU refuses ("misaligned address") and an x86 CPU performs without
// complaint. Candidate libraries are compiled with the host compiler's alignment check
// (-fsanitize=alignment, sim_compiler.cpp) against CUDA's vector types, which carry CUDA's alignment
// (float4: 16 bytes), and linked without the sanitizer's runtime: the check calls the handler below,
// which ends the launch with the GPU's error instead of printing a report. Atomics, which the check
// does not see, call misaligned() themselves (prelude.hpp).
#include <cstdint>

#include "block_runner.hpp"
#include "cuset_sim/runtime.hpp"

namespace {

// The ABI the host compiler's alignment check calls (GCC and Clang alike, "_v1").
struct SourceLocation {
  const char* file;
  std::uint32_t line;
  std::uint32_t column;
};
struct TypeDescriptor {
  std::uint16_t kind;
  std::uint16_t info;
  char name[1];
};
struct TypeMismatchData {
  SourceLocation location;
  const TypeDescriptor* type;
  unsigned char logAlignment;
  unsigned char checkKind;
};

const char* accessName(unsigned char kind) {
  switch (kind) {
    case 0:
      return "load";
    case 1:
      return "store";
    default:
      return "access";  // a reference bound to it, a member of it: the access that follows
  }
}

[[noreturn]] void report(const TypeMismatchData* data, std::uintptr_t pointer) {
  using cuset_sim::detail::format;
  const unsigned alignment = 1u << data->logAlignment;
  // The check also reports null pointers and too-small objects when asked to; only alignment is asked for.
  throw cuset_sim::detail::SimTrap{format("misaligned address: %s of %s at 0x%llx, which must be %u-byte aligned (line %u)",
                                          accessName(data->checkKind), data->type ? data->type->name : "?", static_cast<unsigned long long>(pointer),
                                          alignment, data->location.line)};
}

}  // namespace

extern "C" void __ubsan_handle_type_mismatch_v1(const TypeMismatchData* data, std::uintptr_t pointer) { report(data, pointer); }
extern "C" void __ubsan_handle_type_mismatch_v1_abort(const TypeMismatchData* data, std::uintptr_t pointer) { report(data, pointer); }

namespace cuset_sim {

void misaligned(const void* address, std::size_t alignment, const char* what) {
  throw detail::SimTrap{detail::format("misaligned address: %s at %p, which must be %zu-byte aligned", what, address, alignment)};
}

}  // namespace cuset_sim
