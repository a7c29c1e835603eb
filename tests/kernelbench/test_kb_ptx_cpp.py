#!/usr/bin/env python3
"""kb_ptx_cpp (a Triton kernel's PTX as C++): the translation compiled with the host's g++ and run, each
instruction's result against the value the PTX ISA gives, at the edges where C++'s own meaning differs
(shifts by the width, MIN / -1, float-to-int saturation and NaN, NaN in comparisons, signed and unsigned
comparisons, high and wide products, narrow integer promotion, vector loads and stores, branches); and
what is left to the interpreter."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "evaluator", "kernelbench", "python"))
import kb_ptx_cpp  # noqa: E402

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


NAN = "0f7FC00000"
# (PTX computing %r9 (or %rd9 for 64-bit results) from literals moved into registers, expected value)
CASES = [
    ("mov.u32 %r1, 1; mov.u32 %r2, 32; shl.b32 %r9, %r1, %r2;", 0),
    ("mov.u32 %r1, 1; mov.u32 %r2, 31; shl.b32 %r9, %r1, %r2;", 0x80000000),
    ("mov.u32 %r1, -2147483648; mov.u32 %r2, 40; shr.s32 %r9, %r1, %r2;", 0xFFFFFFFF),
    ("mov.u32 %r1, -2147483648; mov.u32 %r2, 40; shr.u32 %r9, %r1, %r2;", 0),
    ("mov.u32 %r1, -2147483648; mov.u32 %r2, 4; shr.s32 %r9, %r1, %r2;", 0xF8000000),
    ("mov.u32 %r1, -2147483648; mov.u32 %r2, -1; div.s32 %r9, %r1, %r2;", 0x80000000),
    ("mov.u32 %r1, -7; mov.u32 %r2, 2; rem.s32 %r9, %r1, %r2;", 0xFFFFFFFF),
    ("mov.u32 %r1, -7; mov.u32 %r2, 2; div.u32 %r9, %r1, %r2;", (2**32 - 7) // 2),
    (f"mov.b32 %r1, {NAN}; cvt.rzi.s32.f32 %r9, %r1;", 0),
    ("mov.b32 %r1, 0f501502F9; cvt.rzi.s32.f32 %r9, %r1;", 0x7FFFFFFF),  # 1e10
    ("mov.b32 %r1, 0fD01502F9; cvt.rzi.s32.f32 %r9, %r1;", 0x80000000),  # -1e10
    ("mov.b32 %r1, 0fC02CCCCD; cvt.rzi.s32.f32 %r9, %r1;", 0xFFFFFFFE),  # -2.7
    ("mov.b32 %r1, 0fC02CCCCD; cvt.rzi.u32.f32 %r9, %r1;", 0),
    ("mov.b32 %r1, 0f40200000; cvt.rni.s32.f32 %r9, %r1;", 2),  # 2.5: to even
    ("mov.b32 %r1, 0f40600000; cvt.rni.s32.f32 %r9, %r1;", 4),  # 3.5
    ("mov.b32 %r1, 0fC02CCCCD; cvt.rmi.f32.f32 %r9, %r1;", f32(-3.0)),
    ("mov.u32 %r1, -3; cvt.rn.f32.s32 %r9, %r1;", f32(-3.0)),
    (f"mov.b32 %r1, {NAN}; mov.b32 %r2, 0f3F800000; setp.ne.f32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 0),
    (f"mov.b32 %r1, {NAN}; mov.b32 %r2, 0f3F800000; setp.neu.f32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 1),
    (f"mov.b32 %r1, {NAN}; mov.b32 %r2, 0f3F800000; setp.geu.f32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 1),
    (f"mov.b32 %r1, {NAN}; mov.b32 %r2, 0f3F800000; setp.nan.f32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 1),
    ("mov.b32 %r1, 0f3F800000; mov.b32 %r2, 0f40000000; setp.ne.f32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 1),
    ("mov.u32 %r1, -1; mov.u32 %r2, 1; setp.lt.u32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 0),
    ("mov.u32 %r1, -1; mov.u32 %r2, 1; setp.lt.s32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 1),
    ("mov.u32 %r1, -1; mov.u32 %r2, 1; setp.lo.s32 %p1, %r1, %r2; selp.u32 %r9, 1, 0, %p1;", 0),
    ("mov.u32 %r1, 1; mov.u32 %r2, 2; setp.lt.s32 %p2, %r1, %r2; setp.gt.and.s32 %p1, %r1, %r2, %p2; selp.u32 %r9, 1, 0, %p1;", 0),
    ("mov.u32 %r1, 1; mov.u32 %r2, 2; setp.lt.s32 %p2, %r1, %r2; not.pred %p1, %p2; selp.u32 %r9, 7, 9, %p1;", 9),
    ("mov.u32 %r1, -2; mov.u32 %r2, 3; mul.hi.s32 %r9, %r1, %r2;", 0xFFFFFFFF),
    ("mov.u32 %r1, -1; mov.u32 %r2, -1; mul.hi.u32 %r9, %r1, %r2;", 0xFFFFFFFE),
    ("mov.u32 %r1, 65536; mov.u32 %r2, 65536; mul.lo.s32 %r9, %r1, %r2;", 0),
    ("mov.u32 %r1, 7; mov.u32 %r2, -3; mov.u32 %r3, 5; mad.lo.s32 %r9, %r1, %r2, %r3;", (7 * -3 + 5) & 0xFFFFFFFF),
    ("mov.u32 %r1, -1; mov.u32 %r2, 1; min.s32 %r9, %r1, %r2;", 0xFFFFFFFF),
    ("mov.u32 %r1, -1; mov.u32 %r2, 1; min.u32 %r9, %r1, %r2;", 1),
    ("mov.u32 %r1, -1; mov.u32 %r2, 1; max.s32 %r9, %r1, %r2;", 1),
    ("mov.u32 %r1, -2147483648; neg.s32 %r9, %r1;", 0x80000000),
    ("mov.u32 %r1, -2147483648; abs.s32 %r9, %r1;", 0x80000000),
    ("mov.u32 %r1, -5; abs.s32 %r9, %r1;", 5),
    (f"mov.b32 %r1, {NAN}; mov.b32 %r2, 0f40000000; max.f32 %r9, %r1, %r2;", f32(2.0)),
    ("mov.b32 %r1, 0f40000000; mov.b32 %r2, 0f40400000; mov.b32 %r3, 0f3F800000; fma.rn.f32 %r9, %r1, %r2, %r3;", f32(7.0)),
    ("mov.b32 %r1, 0f41000000; ex2.approx.f32 %r9, %r1;", f32(256.0)),
    ("mov.b32 %r1, 0f40800000; rsqrt.approx.ftz.f32 %r9, %r1;", f32(0.5)),
    ("mov.b32 %r1, 0f40800000; mov.b32 %r2, 0f40000000; div.full.f32 %r9, %r1, %r2;", f32(2.0)),
    ("mov.b32 %r1, 0f3F800000; neg.f32 %r9, %r1;", f32(-1.0)),
    ("mov.b32 %r1, 0f3F800000; mov.b32 %r2, 0f3F800000; sub.f32 %r9, %r1, %r2;", 0),
    ("mov.u32 %r1, -1; mov.u32 %r2, 0; xor.b32 %r3, %r1, %r2; not.b32 %r9, %r3;", 0),
    # 16-bit registers: C++ promotes to int; PTX wraps at 16 bits
    ("mov.u16 %rs1, -1; mov.u16 %rs2, -1; mul.lo.s16 %rs3, %rs1, %rs2; cvt.u32.u16 %r9, %rs3;", 1),
    ("mov.u16 %rs1, 65535; mov.u16 %rs2, 1; add.s16 %rs3, %rs1, %rs2; cvt.u32.u16 %r9, %rs3;", 0),
    ("mov.u16 %rs1, -2; cvt.s32.s16 %r9, %rs1;", 0xFFFFFFFE),
    ("mov.u16 %rs1, -2; cvt.u32.u16 %r9, %rs1;", 0xFFFE),
    # 64-bit results (%rd9)
    ("mov.u32 %r1, -2; mov.u32 %r2, 3; mul.wide.s32 %rd9, %r1, %r2;", (-6) & (2**64 - 1)),
    ("mov.u32 %r1, -2; mov.u32 %r2, 3; mul.wide.u32 %rd9, %r1, %r2;", (2**32 - 2) * 3),
    ("mov.u32 %r1, -2; mov.u32 %r2, 3; mov.u64 %rd1, 10; mad.wide.s32 %rd9, %r1, %r2, %rd1;", 4),
    ("mov.u32 %r1, -1; cvt.s64.s32 %rd9, %r1;", 2**64 - 1),
    ("mov.u32 %r1, -1; cvt.u64.u32 %rd9, %r1;", 2**32 - 1),
    ("mov.u64 %rd1, 4294967301; cvt.u32.u64 %r1, %rd1; cvt.u64.u32 %rd9, %r1;", 5),
    ("mov.u64 %rd1, 1; mov.u32 %r2, 64; shl.b64 %rd9, %rd1, %r2;", 0),
    ("mov.u64 %rd1, 1; mov.u32 %r2, 40; shl.b64 %rd9, %rd1, %r2;", 2**40),
    ("mov.u64 %rd1, -9; mov.u64 %rd2, 2; div.s64 %rd9, %rd1, %rd2;", (-4) & (2**64 - 1)),
    # a loop: sum 1..10 with a branch back
    ("mov.u32 %r1, 0; mov.u32 %r2, 1; $L__BB0_1: add.s32 %r1, %r1, %r2; add.s32 %r2, %r2, 1; "
     "setp.le.s32 %p1, %r2, 10; @%p1 bra $L__BB0_1; mov.u32 %r9, %r1;", 55),
    # an early exit skips the rest
    ("mov.u32 %r9, 3; setp.eq.s32 %p1, %r9, 3; @!%p1 bra $L__BB0_2; mov.u32 %r9, 4; $L__BB0_2: add.s32 %r9, %r9, 1;", 5),
]


def kernel_body(case_ptx, n):
    lines = [".reg .pred %p<4>;", ".reg .b16 %rs<4>;", ".reg .b32 %r<12>;", ".reg .b64 %rd<12>;",
             "ld.param.u64 %rd10, [out_param];", f"add.s64 %rd11, %rd10, {16 * n};"]
    for stmt in case_ptx.replace("$L__BB0_1:", "$L__BB0_1:;").replace("$L__BB0_2:", "$L__BB0_2:;").split(";"):
        stmt = stmt.strip()
        if not stmt:
            continue
        if stmt.endswith(":"):
            lines.append(stmt.replace("BB0", f"BB{n}"))
        else:
            lines.append(stmt.replace("BB0", f"BB{n}") + ";")
    lines.append("st.global.b32 [ %rd11 + 0 ], %r9;" if "%rd9" not in case_ptx else "st.global.b64 [ %rd11 + 8 ], %rd9;")
    return lines


SHIM = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __global__
#define __device__
#define __forceinline__ inline
#define __trap() abort()
#define CUSET_SIM_UNCHECKED
namespace cuset_sim { [[noreturn]] inline void trap(const char*, int) { abort(); } }
struct Dim { unsigned x, y, z; };
static Dim threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{1, 1, 1}, gridDim{1, 1, 1};
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline double __longlong_as_double(long long u) { double f; std::memcpy(&f, &u, 8); return f; }
inline long long __double_as_longlong(double f) { long long u; std::memcpy(&u, &f, 8); return u; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
"""


def main():
    cxx = shutil.which("g++")
    if cxx is None:
        print("kb_ptx_cpp: g++ not found, skipped")
        return 77
    params = [("u64", "ptr", "out_param")]
    source = SHIM + kb_ptx_cpp.HELPERS
    for n, (ptx, _) in enumerate(CASES):
        try:
            source += kb_ptx_cpp.cpp_of_ptx(f"case{n}", params, kernel_body(ptx, n), "void* p0")
        except kb_ptx_cpp.Untranslatable as e:
            failures.append(f"case {n} `{ptx}` not translated: {e}")
    source += "int main() {\n  static unsigned long long out[%d][2] = {};\n" % len(CASES)
    for n in range(len(CASES)):
        source += f"  case{n}(&out[0][0]);\n"
    source += '  for (auto& o : out) std::printf("%llu %llu\\n", o[0] & 0xffffffffull, o[1]);\n}\n'
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "t.cpp"), os.path.join(tmp, "t")
        with open(src, "w") as f:
            f.write(source)
        build = subprocess.run([cxx, "-std=c++20", "-O1", "-ffp-contract=off", "-fno-strict-aliasing", "-o", exe, src],
                               capture_output=True, text=True)
        if build.returncode != 0:
            print(build.stderr[-4000:])
            return 1
        rows = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
    for n, (ptx, want) in enumerate(CASES):
        low, wide = (int(x) for x in rows[n].split())
        got = wide if "%rd9" in ptx else low
        check(f"case {n} `{ptx}`", got == want, f"got 0x{got:x}, want 0x{want:x}")

    # Translated shapes: a warp-wide instruction is one asm statement over the C++ registers (outputs
    # first; an accumulator both read and written is both); a guard is an if; shared addresses stay
    # shared-window addresses in registers and become pointers into the dynamic shared memory.
    t = kb_ptx_cpp.Translator(params)
    for decl in (".reg .pred %p<2>;", ".reg .b32 %r<12>;", ".reg .b64 %rd<3>;"):
        t.declare(decl)
    shfl = t.instruction("shfl.sync.bfly.b32 %r1, %r2, 16, 31, -1;")
    check("shfl is an asm statement", shfl == 'asm volatile("shfl.sync.bfly.b32 %0, %1, 16, 31, -1;" : "=r"(v_r1) : "r"(v_r2) : "memory");', shfl)
    mma = t.instruction("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 { %r1, %r2, %r3, %r4 }, { %r5, %r6, %r7, %r8 }, "
                        "{ %r9, %r10 }, { %r1, %r2, %r3, %r4 };")
    check("mma's accumulators are outputs and inputs", '"=r"(v_r4) : "r"(v_r5)' in mma and '"r"(v_r1), "r"(v_r2), "r"(v_r3), "r"(v_r4) : "memory"' in mma
          and "{ %0, %1, %2, %3 }, { %4, %5, %6, %7 }, { %8, %9 }, { %10, %11, %12, %13 }" in mma, mma)
    load = t.instruction("@%p1 ld.global.L1::evict_last.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 16 ];")
    check("a guarded vector load", load.startswith("if (v_p1) { { const cuset_ptx_vec<unsigned, 4> cuset_v = *reinterpret_cast<const "
                                                   "cuset_ptx_vec<unsigned, 4>*>((reinterpret_cast<char*>(v_rd1) + (16)));"), load)
    shared = t.instruction("st.shared::cta.b32 [%r5+4], %r6;")
    check("a shared store", "cuset_ptx_store_shared<unsigned>(static_cast<char*>(__cvta_shared_to_generic((unsigned)(v_r5 + (4)))), v_r6);"
          == shared, shared)
    shared = t.instruction("ld.shared.v2.b32 {%r1, %r2}, [global_smem+8];")
    check("a shared vector load from global_smem", "*reinterpret_cast<const cuset_ptx_vec<unsigned, 2>*>(static_cast<char*>(__cvta_shared_to_generic("
          "(unsigned)(((unsigned)cuset_smem_base) + (8)))));" in shared and t.uses_smem, shared)
    check("bar.sync 0 is __syncthreads", t.instruction("bar.sync 0;") == "__syncthreads();")
    for line, why in [("cvt.rn.f16x2.f32 %r1, %r2, %r3;", "f16x2"), ("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;", "predicate"),
                      ("ld.volatile.global.b32 %r1, [%rd1];", "memory-model"), ("add.sat.s32 %r1, %r2, %r3;", "add.sat"),
                      ("mov.u32 %r1, %clock;", "%clock")]:
        try:
            t.instruction(line)
            failures.append(f"`{line}` was translated")
        except kb_ptx_cpp.Untranslatable as e:
            check(f"`{line}` says why", why in str(e), str(e))

    if failures:
        print("\n".join(failures))
        return 1
    print(f"kb_ptx_cpp: ok ({len(CASES)} instruction cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
