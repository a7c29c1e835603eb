#pragma once
// Inline PTX for the CPU simulator: each `asm("...")` statement inside a function whose template is
// PTX becomes a call into the simulator's PTX interpreter (cuset_sim/ptx.hpp) before the host build.
// Templates that are not PTX (x86 in host-only code) are left exactly as written, so the host
// compiler and the sandbox treat them as before; PTX the simulator does not run makes the whole
// candidate `unsupported`, naming the instruction.
#include <string>
#include <string_view>

namespace cuset {

struct InlinePtxRewrite {
  std::string source;        // the candidate with its PTX statements rewritten; line numbers kept
  std::string unsupported;   // non-empty: why the simulator cannot run the candidate
  bool collectives = false;  // some statement reaches a barrier or warp collective
  int rewritten = 0;         // statements rewritten
};

InlinePtxRewrite rewriteInlinePtx(std::string_view source);

}  // namespace cuset
