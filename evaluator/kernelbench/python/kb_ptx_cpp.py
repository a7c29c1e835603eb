"""A Triton kernel's PTX as straight-line CUDA C++, one statement per PTX instruction (decision 141).

The simulator runs C++ compiled for the host about five times faster than its PTX interpreter runs the
same instructions, so the Triton form hands it this translation when every instruction of the kernel is
one it knows; otherwise (`Untranslatable`) the kernel keeps the whole-body inline-asm form the
interpreter runs (kb_triton.cuda_of_ptx).

What a statement means is the PTX ISA's, written so that C++ cannot differ from it:
- every register is a C++ variable of its declared width; a value is read with the instruction's type
  (bit casts between integer and floating-point registers, as PTX's untyped .bN registers are);
- integer arithmetic is done unsigned, so that wrap-around is defined as on the GPU; shifts by the width
  or more give 0 (or the sign), division by zero traps as the interpreter's does;
- float comparisons keep PTX's ordered/unordered meaning (`ne` is false for NaN, `neu` true);
- mul/add without a rounding mode are plain C++ (the host build may fuse them, as ptxas does); with
  `.rn` they are the `__fmul_rn` family, which the host build never fuses;
- the warp-wide and memory-model instructions (shfl, mma, ldmatrix, cp.async, redux, atom, red, fence,
  and the bit-twiddling ones) stay PTX: each becomes a one-instruction asm statement with its registers
  as operands, which the simulator's interpreter runs exactly as before;
- branches are gotos, so each thread follows its own path as it does in the interpreter.
Shared memory: Triton addresses it with 32-bit shared-window addresses starting at `global_smem`; the
registers keep those addresses (the asm statements need them) and C++ accesses turn each into a pointer
with `__cvta_shared_to_generic`, which checks it lies in the block's shared memory as the interpreter
does. A shared store that leaves the bytes as they are is not a write the race check sees, as in the
interpreter (Triton's reductions have every warp store the same replicated value to one address).
"""
import re


class Untranslatable(Exception):
    """An instruction (or form) this translation does not write as C++: the kernel keeps the asm form."""


# Register declarations' PTX types -> the C++ type of the variable.
REG_CTYPE = {"pred": "bool", "b8": "unsigned char", "u8": "unsigned char", "s8": "unsigned char", "b16": "unsigned short",
             "u16": "unsigned short", "s16": "unsigned short", "b32": "unsigned", "u32": "unsigned", "s32": "unsigned",
             "b64": "unsigned long long", "u64": "unsigned long long", "s64": "unsigned long long", "f32": "float",
             "f64": "double"}
# An instruction's type -> the C++ type its operands are read and computed as.
CTYPE = {"pred": "bool", "b8": "unsigned char", "u8": "unsigned char", "s8": "signed char", "b16": "unsigned short",
         "u16": "unsigned short", "s16": "short", "b32": "unsigned", "u32": "unsigned", "s32": "int",
         "b64": "unsigned long long", "u64": "unsigned long long", "s64": "long long", "f32": "float", "f64": "double"}
UNSIGNED = {8: "unsigned char", 16: "unsigned short", 32: "unsigned", 64: "unsigned long long"}
SIGNED = {8: "signed char", 16: "short", 32: "int", 64: "long long"}
FLOATS = {"f32", "f64"}
SPECIALS = {"%tid.x": "threadIdx.x", "%tid.y": "threadIdx.y", "%tid.z": "threadIdx.z", "%ntid.x": "blockDim.x",
            "%ntid.y": "blockDim.y", "%ntid.z": "blockDim.z", "%ctaid.x": "blockIdx.x", "%ctaid.y": "blockIdx.y",
            "%ctaid.z": "blockIdx.z", "%nctaid.x": "gridDim.x", "%nctaid.y": "gridDim.y", "%nctaid.z": "gridDim.z",
            # Triton's blocks are one-dimensional (the recording launches 32 x num_warps threads in x)
            "%laneid": "(threadIdx.x & 31u)"}
# Instructions kept as PTX (one asm statement each); the value says whether operand 0 is written.
PASSTHROUGH = {"shfl": True, "mma": True, "ldmatrix": True, "redux": True, "atom": True, "prmt": True, "lop3": True,
               "bfe": True, "bfi": True, "popc": True, "clz": True, "brev": True, "activemask": True, "stmatrix": False,
               "cp": False, "red": False, "fence": False, "membar": False}
ASM_CONSTRAINT = {"unsigned": "r", "unsigned long long": "l", "unsigned short": "h", "float": "f", "double": "d"}
CMP_INT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}

HELPERS = r"""#ifndef CUSET_PTX_CPP_HELPERS
#define CUSET_PTX_CPP_HELPERS
// Helpers of Triton kernels translated from PTX to C++ (kb_ptx_cpp.py): PTX's meaning where C++'s differs.
template <class T, int N> struct alignas(sizeof(T) * N) cuset_ptx_vec { T v[N]; };
template <class T> __device__ __forceinline__ T cuset_ptx_div(T a, T b) {
  if (b == 0) __trap();
  if (T(-1) < T(0) && b == T(-1)) return T(0) - a;  // MIN / -1 wraps, as on the GPU
  return a / b;
}
template <class T> __device__ __forceinline__ T cuset_ptx_rem(T a, T b) {
  if (b == 0) __trap();
  if (T(-1) < T(0) && b == T(-1)) return T(0);
  return a % b;
}
// cvt from floating point to an integer: round as asked, saturate to the destination, NaN -> 0.
template <class T> __device__ __forceinline__ T cuset_ptx_f2i(double v, int mode) {
  if (v != v) return T(0);
  v = mode == 0 ? trunc(v) : mode == 1 ? rint(v) : mode == 2 ? floor(v) : ceil(v);
  const double lo = T(-1) < T(0) ? -ldexp(1.0, int(sizeof(T)) * 8 - 1) : 0.0;
  const double hi = T(-1) < T(0) ? ldexp(1.0, int(sizeof(T)) * 8 - 1) : ldexp(1.0, int(sizeof(T)) * 8);
  if (v <= lo) return T(-1) < T(0) ? T(T(1) << (sizeof(T) * 8 - 1)) : T(0);
  if (v >= hi) return T(-1) < T(0) ? T(~(T(1) << (sizeof(T) * 8 - 1))) : T(~T(0));
  return T(v);
}
// A shared-memory store as the simulator's interpreter makes one (ptx_exec.cpp): a store that leaves the
// bytes as they are is not handed to the race check, since Triton's reductions have every warp store
// its copy of one replicated value to the same address. Not inlined: the race report's line is the
// caller's (the hook takes its return address).
template <class T> __attribute__((noinline)) CUSET_SIM_UNCHECKED void cuset_ptx_store_shared(void* p, T v) {
  if (reinterpret_cast<unsigned long long>(p) % alignof(T) != 0) ::cuset_sim::trap("st.shared: a misaligned address", -1);
  if (__builtin_memcmp(p, &v, sizeof v) == 0) return;
#if defined(__SANITIZE_ADDRESS__) && defined(CUSET_SIM_SHARED_ACCESSES)
  CUSET_SIM_SHARED_ACCESS(reinterpret_cast<unsigned long long>(p), sizeof v, 1);
#endif
  __builtin_memcpy(p, &v, sizeof v);
}
#endif
"""


def _number(text):
    """A PTX integer literal's value (decimal, hex, octal, binary; a trailing U)."""
    t = text.rstrip("Uu")
    negative = t.startswith("-")
    t = t.lstrip("-")
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", t):
        v = int(t, 16)
    elif re.fullmatch(r"0[bB][01]+", t):
        v = int(t[2:], 2)
    elif re.fullmatch(r"0[0-7]+", t):
        v = int(t, 8)
    elif re.fullmatch(r"\d+", t):
        v = int(t)
    else:
        raise Untranslatable(f"the literal {text}")
    return -v if negative else v


def _bits(ptype):
    if ptype == "pred":
        return 1
    m = re.search(r"\d+", ptype)
    if m is None:
        raise Untranslatable(f"the type .{ptype}")
    return int(m.group())


def _split_operands(text):
    """Operands separated by top-level commas ({...} and [...] kept whole)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Translator:
    def __init__(self, params):
        self.params = {pname: n for n, (_, _, pname) in enumerate(params)}
        self.param_types = {pname: ctype for (_, ctype, pname) in params}  # "ptr" or the PTX type
        self.regs = {}  # PTX name (%r1) -> (C++ name, C++ type)
        self.decls = []
        self.uses_smem = False
        self.out = []

    # --- registers and operands -------------------------------------------------------------------
    def declare(self, line):
        m = re.fullmatch(r"\.reg\s+\.(\w+)\s+(%\w+)(?:<(\d+)>)?\s*;", line)
        if m is None:
            raise Untranslatable(f"the declaration `{line}`")
        ptype, name, count = m.groups()
        if ptype not in REG_CTYPE:
            raise Untranslatable(f"registers of type .{ptype}")
        ctype = REG_CTYPE[ptype]
        names = [f"{name}{i}" for i in range(int(count))] if count else [name]
        for n in names:
            c = "v_" + n[1:]
            self.regs[n] = (c, ctype)
        self.decls.append((ctype, [self.regs[n][0] for n in names]))

    def reg(self, name):
        if name not in self.regs:
            raise Untranslatable(f"the register {name}")
        return self.regs[name]

    @staticmethod
    def convert(expr, src, dst):
        """`expr` of C++ type `src` as C++ type `dst`: a value cast between integers, a bit cast between an
        integer and a floating-point type of one width."""
        if src == dst:
            return expr
        fsrc, fdst = src in ("float", "double"), dst in ("float", "double")
        if not fsrc and not fdst:
            return f"(({dst})({expr}))"
        if fdst and not fsrc:
            if dst == "float":
                return f"__uint_as_float((unsigned)({expr}))"
            return f"__longlong_as_double((long long)({expr}))"
        if fsrc and not fdst:
            if src == "float":
                return f"(({dst})__float_as_uint({expr}))"
            return f"(({dst})__double_as_longlong({expr}))"
        raise Untranslatable(f"a conversion from {src} to {dst} in a move")

    def read(self, op, ptype):
        ctype = CTYPE.get(ptype)
        if ctype is None:
            raise Untranslatable(f"operands of type .{ptype}")
        op = op.strip()
        if op.startswith("%") and op in self.regs:
            c, rtype = self.regs[op]
            return self.convert(c, rtype, ctype)
        if op in SPECIALS:
            return f"(({ctype}){SPECIALS[op]})"
        if op == "global_smem":
            self.uses_smem = True
            return f"(({ctype})cuset_smem_base)"
        if op.startswith("%"):
            raise Untranslatable(f"the operand {op}")
        # 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX: a float's bits, also as an untyped .b32/.b64 value
        if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", op) and ptype != "f64" and _bits(ptype) == 32:
            return f"__uint_as_float(0x{op[2:]}u)" if ptype == "f32" else f"(({ctype})0x{op[2:]}u)"
        if re.fullmatch(r"0[dD][0-9a-fA-F]{16}", op) and ptype != "f32" and _bits(ptype) == 64:
            return f"__longlong_as_double((long long)0x{op[2:]}ull)" if ptype == "f64" else f"(({ctype})0x{op[2:]}ull)"
        if re.fullmatch(r"0[fFdD][0-9a-fA-F]+", op) or ptype in FLOATS:
            raise Untranslatable(f"the literal {op} as .{ptype}")
        if ptype == "pred":
            return "true" if _number(op) else "false"
        v = _number(op) & ((1 << _bits(ptype)) - 1)
        return f"(({ctype})0x{v:x}ull)"

    def write(self, dst, ptype, expr):
        dst = dst.strip()
        if dst == "_":
            return f"(void)({expr});"
        c, rtype = self.reg(dst)
        if rtype == "bool":
            return f"{c} = ({expr});"
        return f"{c} = {self.convert(expr, CTYPE[ptype], rtype)};"

    def address(self, op, space):
        """A `[reg + offset]` operand as a C++ pointer expression (char*)."""
        m = re.fullmatch(r"\[\s*([%\w.]+)\s*(?:\+\s*(-?\w+))?\s*\]", op.strip())
        if m is None:
            raise Untranslatable(f"the address {op}")
        base, off = m.group(1), _number(m.group(2)) if m.group(2) else 0
        if space == "shared":  # the window address, bounds-checked as the interpreter checks it
            return f"static_cast<char*>(__cvta_shared_to_generic((unsigned)({self.read(base, 'u32')} + ({off}))))"
        if base in self.params:
            raise Untranslatable("an address of a kernel parameter")
        b = self.read(base, "u64")
        return f"(reinterpret_cast<char*>({b}) + ({off}))"

    # --- instructions -----------------------------------------------------------------------------
    def instruction(self, line):
        guard = None
        m = re.match(r"@(!?)(%\w+)\s+", line)
        if m:
            c, rtype = self.reg(m.group(2))
            if rtype != "bool":
                raise Untranslatable(f"a guard that is not a predicate: {line}")
            guard = ("!" if m.group(1) else "") + c
            line = line[m.end():]
        m = re.fullmatch(r"([a-z][\w.:]*)\s*(.*?)\s*;", line)
        if m is None:
            raise Untranslatable(f"`{line}`")
        opcode, rest = m.group(1), m.group(2)
        parts = opcode.split(".")
        stmt = self.statement(parts[0], parts[1:], _split_operands(rest), line)
        return f"if ({guard}) {{ {stmt} }}" if guard else stmt

    def statement(self, op, mods, ops, line):
        # Qualifiers that change nothing the simulator models: cache and eviction hints, approximation
        # and flush-to-zero (the interpreter computes these exactly too), bra.uni's uniformity promise.
        mods = [m for m in mods if not re.fullmatch(r"(?:L1|L2)::\S*|nc|ca|cg|cs|lu|cv|approx|full|ftz|uni", m)]
        mods = ["shared" if m.startswith("shared::") else m for m in mods]
        if op == "mov":
            return self.write(ops[0], mods[-1], self.read(ops[1], mods[-1]))
        if op in ("ld", "st"):
            return self.memory(op, mods, ops, line)
        if op == "bra":
            return f"goto {ops[0].lstrip('$')};"
        if op in ("ret", "exit"):
            return "return;"
        if op in ("bar", "barrier") and mods == ["sync"] and ops == ["0"]:
            return "__syncthreads();"
        if op in ("add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "neg", "abs", "and", "or", "xor", "not", "shl",
                  "shr", "ex2", "lg2", "sqrt", "rsqrt", "rcp"):
            return self.arithmetic(op, mods, ops, line)
        if op == "setp":
            return self.setp(mods, ops, line)
        if op == "selp":
            t = mods[-1]
            return self.write(ops[0], t, f"({self.read(ops[3], 'pred')} ? {self.read(ops[1], t)} : {self.read(ops[2], t)})")
        if op == "cvt":
            return self.cvt(mods, ops, line)
        if op in PASSTHROUGH:
            return self.passthrough(op, ops, line)
        raise Untranslatable(f"`{line}`")

    def memory(self, op, mods, ops, line):
        space = next((m for m in mods if m in ("global", "shared", "local", "param", "const")), "generic")
        if any(m in ("volatile", "relaxed", "acquire", "release", "weak", "mmio") for m in mods):
            raise Untranslatable(f"a memory-model load or store: `{line}`")
        if space in ("local", "const") or space == "param" and op == "st":
            raise Untranslatable(f"`{line}`")
        vec = next((int(m[1:]) for m in mods if re.fullmatch(r"v\d", m)), 1)
        t = mods[-1]
        if t not in CTYPE or t == "pred":
            raise Untranslatable(f"`{line}`")
        if space == "param":
            pname = ops[1].strip("[] ")
            if pname not in self.params:
                raise Untranslatable(f"`{line}`")
            n = self.params[pname]
            ptype = self.param_types[pname]
            src = "unsigned long long" if ptype == "ptr" else CTYPE.get(ptype, None)
            if src is None:
                raise Untranslatable(f"a parameter of type .{ptype}")
            value = f"(unsigned long long)p{n}" if ptype == "ptr" else f"p{n}"
            # a load into a wider register extends as the load's type says
            c, rtype = self.reg(ops[0])
            return f"{c} = {self.convert(self.convert(value, src, CTYPE[t]), CTYPE[t], rtype)};"
        ctype = CTYPE[t]
        if op == "ld":
            data, addr = ops[0], ops[1]
        else:
            addr, data = ops[0], ops[1]
        elements = [e.strip() for e in data.strip("{} ").split(",")] if data.strip().startswith("{") else [data]
        if len(elements) != vec:
            raise Untranslatable(f"`{line}`")
        ptr = self.address(addr, space)
        if vec == 1:
            if op == "ld":
                return self.write(elements[0], t, f"*reinterpret_cast<const {ctype}*>({ptr})")
            if space == "shared":
                return f"cuset_ptx_store_shared<{ctype}>({ptr}, {self.read(elements[0], t)});"
            return f"*reinterpret_cast<{ctype}*>({ptr}) = {self.read(elements[0], t)};"
        vt = f"cuset_ptx_vec<{ctype}, {vec}>"
        if op == "ld":
            body = [f"const {vt} cuset_v = *reinterpret_cast<const {vt}*>({ptr});"]
            body += [self.write(e, t, f"cuset_v.v[{i}]") for i, e in enumerate(elements)]
        else:
            body = [f"{vt} cuset_v;"] + [f"cuset_v.v[{i}] = {self.read(e, t)};" for i, e in enumerate(elements)]
            body.append(f"cuset_ptx_store_shared<{vt}>({ptr}, cuset_v);" if space == "shared" else f"*reinterpret_cast<{vt}*>({ptr}) = cuset_v;")
        return "{ " + " ".join(body) + " }"

    def arithmetic(self, op, mods, ops, line):
        rounding = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), None)
        if "sat" in mods or "NaN" in mods or "xorsign" in mods or "cc" in mods:
            raise Untranslatable(f"`{line}`")
        t = mods[-1]
        if t in FLOATS:
            return self.float_arithmetic(op, rounding, t, ops, line)
        if t not in CTYPE or t in ("f16", "bf16", "f16x2", "bf16x2"):
            raise Untranslatable(f"`{line}`")
        if t == "pred":
            a = self.read(ops[1], "pred")
            if op == "not":
                return self.write(ops[0], "pred", f"!{a}")
            sym = {"and": "&&", "or": "||", "xor": "!="}.get(op)
            if sym is None:
                raise Untranslatable(f"`{line}`")
            return self.write(ops[0], "pred", f"({a} {sym} {self.read(ops[2], 'pred')})")
        w = _bits(t)
        u, s = UNSIGNED[w], SIGNED[w]
        signed = t.startswith("s")
        ut = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}[w]
        if w < 32:  # C++ promotes narrower operands to int: compute in unsigned
            promote = lambda e: f"(unsigned)({e})"  # noqa: E731
        else:
            promote = lambda e: e  # noqa: E731
        mode = next((m for m in mods if m in ("lo", "hi", "wide")), "lo")
        if op in ("add", "sub", "and", "or", "xor"):
            sym = {"add": "+", "sub": "-", "and": "&", "or": "|", "xor": "^"}[op]
            return self.write(ops[0], ut, f"(({u})({promote(self.read(ops[1], ut))} {sym} {promote(self.read(ops[2], ut))}))")
        if op == "not":
            return self.write(ops[0], ut, f"(({u})~{promote(self.read(ops[1], ut))})")
        if op == "neg":
            return self.write(ops[0], ut, f"(({u})(0u - {promote(self.read(ops[1], ut))}))")
        if op == "abs":
            if not signed:
                raise Untranslatable(f"`{line}`")
            a = self.read(ops[1], t)
            return self.write(ops[0], ut, f"(({u})({a} < 0 ? ({u})(0u - ({u}){a}) : ({u}){a}))")
        if op in ("min", "max"):
            sym = "<" if op == "min" else ">"
            a, b = self.read(ops[1], t), self.read(ops[2], t)
            return f"{{ const {CTYPE[t]} cuset_a = {a}, cuset_b = {b}; {self.write(ops[0], t, f'(cuset_a {sym} cuset_b ? cuset_a : cuset_b)')} }}"
        if op in ("shl", "shr"):
            a, b = self.read(ops[1], t if op == "shr" else ut), self.read(ops[2], "u32")
            if op == "shl":
                expr = f"({b} >= {w}u ? ({u})0 : ({u})({promote(a)} << {b}))"
            elif signed:
                expr = f"(({u})({s})({a} >> ({b} >= {w}u ? {w - 1}u : {b})))"
            else:
                expr = f"({b} >= {w}u ? ({u})0 : ({u})({a} >> {b}))"
            return self.write(ops[0], ut, expr)
        if op in ("div", "rem"):
            fn = "cuset_ptx_div" if op == "div" else "cuset_ptx_rem"
            return self.write(ops[0], t, f"{fn}<{CTYPE[t]}>({self.read(ops[1], t)}, {self.read(ops[2], t)})")
        if op in ("mul", "mad"):
            a, b = self.read(ops[1], t), self.read(ops[2], t)
            if mode == "lo":
                expr = f"(({u})({promote(f'({u}){a}')} * {promote(f'({u}){b}')}))"
                if op == "mad":
                    expr = f"(({u})({promote(expr)} + {promote(f'({u}){self.read(ops[3], ut)}')}))"
                return self.write(ops[0], ut, expr)
            if w == 64:
                raise Untranslatable(f"`{line}`")
            wide_s, wide_u = SIGNED[2 * w], UNSIGNED[2 * w]
            product = f"(({wide_u})(({wide_s if signed else wide_u}){a} * ({wide_s if signed else wide_u}){b}))"
            if mode == "hi":
                expr = f"(({u})({product} >> {w}))"
                if op == "mad":
                    expr = f"(({u})({promote(expr)} + {promote(f'({u}){self.read(ops[3], ut)}')}))"
                return self.write(ops[0], ut, expr)
            wt = {16: "u32", 32: "u64"}[w]
            if op == "mad":
                product = f"(({wide_u})({product} + {self.read(ops[3], wt)}))"
            return self.write(ops[0], wt, product)
        raise Untranslatable(f"`{line}`")

    def float_arithmetic(self, op, rounding, t, ops, line):
        single = t == "f32"
        ct = CTYPE[t]
        args = [self.read(o, t) for o in ops[1:]]
        if op in ("add", "sub", "mul"):
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            if rounding in (None, "rn"):
                if rounding == "rn":  # never fused with a neighbour (PTX: .rn forbids contraction)
                    fn = {"add": "__fadd_rn", "sub": "__fsub_rn", "mul": "__fmul_rn"}[op] if single else \
                        {"add": "__dadd_rn", "sub": "__dsub_rn", "mul": "__dmul_rn"}[op]
                    return self.write(ops[0], t, f"{fn}({args[0]}, {args[1]})")
                return self.write(ops[0], t, f"(({ct})({args[0]} {sym} {args[1]}))")
            raise Untranslatable(f"`{line}`")
        if rounding not in (None, "rn"):
            raise Untranslatable(f"`{line}`")
        if op in ("fma", "mad"):
            return self.write(ops[0], t, f"{'fmaf' if single else 'fma'}({args[0]}, {args[1]}, {args[2]})")
        if op == "div":
            return self.write(ops[0], t, f"(({ct})({args[0]} / {args[1]}))")
        one = "1.0f" if single else "1.0"
        f = "f" if single else ""
        expr = {"neg": f"(-{args[0]})", "abs": f"fabs{f}({args[0]})", "min": f"fmin{f}({args[0]}, {args[1] if len(args) > 1 else 0})",
                "max": f"fmax{f}({args[0]}, {args[1] if len(args) > 1 else 0})", "ex2": f"exp2{f}({args[0]})",
                "lg2": f"log2{f}({args[0]})", "sqrt": f"sqrt{f}({args[0]})", "rsqrt": f"({one} / sqrt{f}({args[0]}))",
                "rcp": f"({one} / {args[0]})"}.get(op)
        if expr is None or (op in ("min", "max") and len(args) != 2):
            raise Untranslatable(f"`{line}`")
        return self.write(ops[0], t, expr)

    def setp(self, mods, ops, line):
        if "|" in ops[0] or len(mods) < 2:
            raise Untranslatable(f"`{line}`")
        cmp, t = mods[0], mods[-1]
        combine = next((m for m in mods[1:-1] if m in ("and", "or", "xor")), None)
        if t not in CTYPE or t == "pred":
            raise Untranslatable(f"`{line}`")
        a, b = self.read(ops[1], t), self.read(ops[2], t)
        if t in FLOATS:
            ordered = {"eq": "{a} == {b}", "ne": "({a} < {b} || {a} > {b})", "lt": "{a} < {b}", "le": "{a} <= {b}",
                       "gt": "{a} > {b}", "ge": "{a} >= {b}", "equ": "!({a} < {b} || {a} > {b})", "neu": "!({a} == {b})",
                       "ltu": "!({a} >= {b})", "leu": "!({a} > {b})", "gtu": "!({a} <= {b})", "geu": "!({a} < {b})",
                       "num": "({a} == {a} && {b} == {b})", "nan": "!({a} == {a} && {b} == {b})"}.get(cmp)
            if ordered is None:
                raise Untranslatable(f"`{line}`")
            expr = "(" + ordered.format(a="cuset_a", b="cuset_b") + ")"
        else:
            sym = CMP_INT.get(cmp)
            if sym is None:
                raise Untranslatable(f"`{line}`")
            w = _bits(t)
            if cmp in ("lo", "ls", "hi", "hs"):
                a, b = self.read(ops[1], f"u{w}"), self.read(ops[2], f"u{w}")
            expr = f"(cuset_a {sym} cuset_b)"
        if combine:
            c = self.read(ops[3], "pred")
            expr = f"({expr} {dict(and_='&&', or_='||', xor_='!=')[combine + '_']} {c})"
        elif len(ops) != 3:
            raise Untranslatable(f"`{line}`")
        ct = CTYPE[t] if not (t not in FLOATS and cmp in ("lo", "ls", "hi", "hs")) else UNSIGNED[_bits(t)]
        return f"{{ const {ct} cuset_a = {a}, cuset_b = {b}; {self.write(ops[0], 'pred', expr)} }}"

    def cvt(self, mods, ops, line):
        if "sat" in mods or len(mods) < 2:
            raise Untranslatable(f"`{line}`")
        d, s = mods[-2], mods[-1]
        rounding = next((m for m in mods[:-2] if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna")), None)
        if d not in CTYPE or s not in CTYPE or "pred" in (d, s) or len(ops) != 2:
            raise Untranslatable(f"`{line}`")
        a = self.read(ops[1], s)
        if d in FLOATS and s in FLOATS:
            if d == s:
                fn = {"rni": "rint", "rzi": "trunc", "rmi": "floor", "rpi": "ceil"}.get(rounding)
                if fn is None:
                    raise Untranslatable(f"`{line}`")
                return self.write(ops[0], d, f"{fn}{'f' if d == 'f32' else ''}({a})")
            if rounding not in (None, "rn"):
                raise Untranslatable(f"`{line}`")
            return self.write(ops[0], d, f"(({CTYPE[d]}){a})")
        if d in FLOATS:  # integer to float: the host rounds to nearest, as .rn asks
            if rounding != "rn":
                raise Untranslatable(f"`{line}`")
            return self.write(ops[0], d, f"(({CTYPE[d]}){a})")
        if s in FLOATS:
            mode = {None: 0, "rzi": 0, "rni": 1, "rmi": 2, "rpi": 3}.get(rounding)
            if mode is None:
                raise Untranslatable(f"`{line}`")
            return self.write(ops[0], d, f"cuset_ptx_f2i<{CTYPE[d]}>((double){a}, {mode})")
        # integer to integer: C++'s conversion truncates or extends as the source's signedness says
        return self.write(ops[0], d, f"(({CTYPE[d]}){a})")

    def passthrough(self, op, ops, line):
        """One PTX instruction as an asm statement whose operands are the C++ registers it names."""
        writes = PASSTHROUGH[op]
        outputs, inputs = [], []  # (C++ variable, C++ type), in operand order
        first_end = 0  # where operand 0 (the one written, when the instruction writes) ends in the line
        if writes:
            m = re.match(r"[a-z][\w.:]*\s*", line)
            first_end = m.end() + len(_split_operands(line[m.end():].rstrip(" ;"))[0])

        def substitute(match):
            name = match.group(0)
            if name == "global_smem":
                self.uses_smem = True
                variable, written = ("cuset_smem_base", "unsigned"), False
            elif name in self.regs:
                variable, written = self.regs[name], writes and match.start() < first_end
                if variable[1] not in ASM_CONSTRAINT:
                    raise Untranslatable(f"a predicate operand of `{line}`")
            elif name in SPECIALS or name.startswith("%"):
                raise Untranslatable(f"the operand {name} of `{line}`")
            else:
                return name
            pool = outputs if written else inputs
            if variable not in pool:
                pool.append(variable)
            return f"@{'OUT' if written else 'IN'}{pool.index(variable)}@"

        body = re.sub(r"%\w+(?:\.\w+)?|\bglobal_smem\b", substitute, line)
        if len(outputs) + len(inputs) > 30:
            raise Untranslatable(f"`{line}` has more than 30 operands")
        body = re.sub(r"@OUT(\d+)@", lambda m: f"%{int(m.group(1))}", body)
        body = re.sub(r"@IN(\d+)@", lambda m: f"%{len(outputs) + int(m.group(1))}", body)
        outs = ", ".join(f'"={ASM_CONSTRAINT[t]}"({c})' for c, t in outputs)
        ins = ", ".join(f'"{ASM_CONSTRAINT[t]}"({c})' for c, t in inputs)
        return f'asm volatile("{body}" : {outs} : {ins} : "memory");'

    # --- the kernel -------------------------------------------------------------------------------
    def translate(self, name, body_lines, signature):
        code = []
        for line in body_lines:
            if line.startswith(".reg"):
                self.declare(line)
            elif re.fullmatch(r"\$?[\w$]+:", line):
                code.append(f"{line.rstrip(':').lstrip('$')}:;")
            elif line in ("{", "}") or line.startswith("."):
                raise Untranslatable(f"`{line}`")
            else:
                code.append(self.instruction(line))
        out = [f'extern "C" __global__ void {name}({signature}) {{']
        if self.uses_smem:
            out.append("  extern __shared__ __align__(16) unsigned char cuset_triton_smem[];")
            out.append("  const unsigned cuset_smem_base = static_cast<unsigned>(__cvta_generic_to_shared(cuset_triton_smem));")
        for ctype, names in self.decls:
            for i in range(0, len(names), 16):
                out.append(f"  {ctype} " + ", ".join(f"{n} = 0" for n in names[i:i + 16]) + ";")
        out += [f"  {c}" for c in code]
        out.append("}")
        return "\n".join(out) + "\n"


def cpp_of_ptx(name, params, body_lines, signature):
    """The kernel as C++ (raises Untranslatable); `body_lines` are the entry's lines, comments and debug
    directives removed; `params` (PTX type, C type, name) and `signature` the C++ parameter list."""
    return Translator(params).translate(name, body_lines, signature)
