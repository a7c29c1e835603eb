#pragma once
// Inline PTX on the CPU simulator. The sim's host build rewrites each `asm("...PTX..." : outputs :
// inputs)` statement in a kernel (cuset's sim_inline_ptx.cpp) into
//
//   std::uint64_t r[registers] = {inputs...};
//   ptx_run("...PTX...", operands, extended, __LINE__, r);  outputs = r[...];
//
// so the statement runs on a small interpreter (ptx_parse.cpp, ptx_exec.cpp) with the semantics the
// PTX ISA gives it, collectives (shfl.sync, bar.sync, ldmatrix, mma.sync) included. Operands live in
// 64-bit slots holding the bits of their C++ values; %0, %1, ... are slots 0, 1, ...; registers the
// PTX declares (.reg) come after them.
#include <cstdint>
#include <cstring>
#ifndef CUSET_SIM_KERNEL_LIBRARY
#include <string>
#include <string_view>
#endif

namespace cuset_sim {

#ifndef CUSET_SIM_KERNEL_LIBRARY  // the build's check, not for candidate code (runtime.hpp says why)
struct PtxCheck {
  enum class Kind { simulated, not_ptx, unsupported };
  Kind kind = Kind::simulated;
  std::string message;       // not_ptx / unsupported: why, naming the instruction
  int registers = 0;         // slots the caller provides (operands first; only those where the program has hundreds)
  bool collectives = false;  // reaches a barrier or warp collective: the block needs fibers
};

// Whether the simulator can run `text`, the template of an asm statement with `operands` operands
// (`extended`: written with a colon, so %0 names an operand and %% is a literal %). Text that is not
// PTX at all (x86 assembly in host code) is `not_ptx`: the host compiler gets it as written.
PtxCheck ptx_check(std::string_view text, int operands, bool extended);
#endif

// Runs the statement. Its text is parsed on first use and kept by the runtime, keyed by the literal's
// address: not in a static of the candidate, whose writable data the sandbox carries from one trial's
// process to the next (module_state.hpp), where a pointer to the last process's heap would dangle.
// Traps if the text does not parse, which the build's ptx_check rules out.
void ptx_run(const char* text, int operands, int extended, int line, std::uint64_t* registers);

// By value: an array operand ("l"(shared_array)) decays to its address, as in an asm statement.
template <class T>
inline std::uint64_t ptx_in(T value) {
  static_assert(sizeof(T) <= 8, "an asm operand holds at most 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
inline void ptx_out(T& target, std::uint64_t bits) {
  static_assert(sizeof(T) <= 8, "an asm operand holds at most 8 bytes");
  std::memcpy(static_cast<void*>(&target), &bits, sizeof(T));
}

}  // namespace cuset_sim
