#!/usr/bin/env python3
"""kb_triton (the Triton form's recording): Triton's PTX entry made into the CUDA kernel the plan runs
(parameters as operands, narrower parameters widened, shared memory, labels, what is refused), and the
stand-in tensors Triton's binder specialises on having the alignment a GPU's allocation would give."""
import os
import re
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "evaluator", "kernelbench", "python"))
import kb_triton  # noqa: E402
from kb_sandbox import Verdict  # noqa: E402

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")


PTX = """
.version 8.8
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 global_smem[];
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u32 k_param_1,
	.param .f32 k_param_2,
	.param .u64 .ptr .global .align 1 k_param_3
)
.reqntid 128
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<4>;
	.loc	1 3 0                           // k.py:3:0
$L__func_begin0:
	ld.param.b64 	%rd1, [k_param_0];
	ld.param.s32 	%rd2, [k_param_1];
	ld.param.b32 	%r3, [k_param_2];
	mov.u32 	%r1, %tid.x;
	setp.lt.s32 	%p1, %r1, 4;
	@%p1 bra 	$L__BB0_2;
	mov.b32 	%r5, global_smem;
	st.shared.b32 	[%r5], %r3;
$L__BB0_2:
	ret;
$L__func_end0:
}
	.section	.debug_abbrev
	{
.b8 1
	}
"""

kb_triton.TRANSLATE_TO_CPP = False
code, params, interpreted = kb_triton.cuda_of_ptx(PTX, "cuset_triton_0_k")
check("the interpreter form says why", "asked for" in interpreted, interpreted)
check("parameters", [p[1] for p in params] == ["ptr", "u32", "f32", "ptr"], params)
check("signature", 'extern "C" __global__ void cuset_triton_0_k(void* p0, unsigned int p1, float p2, void* p3)' in code, code[:200])
check("a pointer is an l operand", '"l"(p0)' in code and '"f"(p2)' in code, code)
check("ld.param of a pointer is a mov", "mov.b64 %%rd1, %0" in code, code)
check("a 32-bit parameter into a 64-bit register is sign-extended", "cvt.s64.s32 %%rd2, %1" in code, code)
check("a float parameter's bits", "mov.b32 %%r3, %2" in code, code)
check("global_smem is the dynamic shared memory", "mov.b32 \t%%r5, %4" in code and "__cvta_generic_to_shared(cuset_triton_smem)" in code, code)
check("labels lose their $", "L__BB0_2:" in code and "bra \tL__BB0_2" in code and "$L__" not in code, code)
check("no debug information", ".loc" not in code and "debug_abbrev" not in code, code)
check("no parameter read is left", "ld.param" not in code, code)

for bad, why in [(PTX.replace("ret;", "call.uni __assertfail, (%rd1);\n\tret;"), "calls a function"),
                 (PTX.replace("ld.param.b32 \t%r3, [k_param_2];", "ld.param.b32 \t%r3, [k_param_2+4];"), "reads a kernel parameter")]:
    try:
        kb_triton.cuda_of_ptx(bad, "k")
        failures.append(f"PTX that {why} was accepted")
    except Verdict as v:
        check(f"PTX that {why}", v.status == "unsupported" and why.split()[0] in v.reason, v.reason)

# The C++ form (kb_ptx_cpp; its instructions' meaning is test_kb_ptx_cpp.py's): the same parameters, each
# ld.param an assignment with the same widening, the registers C++ variables, shared memory addressed
# from the dynamic shared memory's base.
kb_triton.TRANSLATE_TO_CPP = True
code, params, interpreted = kb_triton.cuda_of_ptx(PTX, "cuset_triton_0_k")
sim_part, gpu_part = code.split("#else\n")
check("the simulator's build takes the C++ form", interpreted == "" and sim_part.startswith("#ifdef CUSET_SIM_KERNEL_LIBRARY\n")
      and "asm" not in sim_part.split("#endif")[-1], interpreted)
check("NVRTC (a GPU) takes the PTX as Triton wrote it", "asm volatile(" in gpu_part and "mov.b64 %%cuset_rd1, %0" in gpu_part
      and gpu_part.endswith("#endif\n"), gpu_part)
# NVRTC names each operand after a register of the enclosing function (%rd1, %r3): the names Triton's
# registers have. Declared again inside the asm statement, they would shadow the operand, and the
# kernel would read an uninitialised register for its parameter on a GPU (the simulator binds operands
# itself and never showed it). The GPU's form renames every register Triton declares.
check("the GPU's form declares its registers apart", ".reg .b64 \t%%cuset_rd<4>;" in gpu_part and ".reg .pred \t%%cuset_p<2>;" in gpu_part
      and re.search(r"%%(?:r|rd|p)\d", gpu_part) is None, gpu_part)
check("special registers keep their names", "mov.u32 \t%%cuset_r1, %%tid.x;" in gpu_part, gpu_part)
check("the C++ form's signature", 'extern "C" __global__ void cuset_triton_0_k(void* p0, unsigned int p1, float p2, void* p3)' in code, code)
check("the C++ form's parameter reads", "v_rd1 = (unsigned long long)p0;" in code and "v_rd2 = ((unsigned long long)(((int)(p1))));" in code
      and "v_r3 = ((unsigned)__float_as_uint(p2));" in code, code)
check("the C++ form's branch", "if (v_p1) { goto L__BB0_2; }" in code and "L__BB0_2:;" in code, code)
check("the C++ form's shared store", "v_r5 = ((unsigned)cuset_smem_base);" in code
      and "cuset_ptx_store_shared<unsigned>(static_cast<char*>(__cvta_shared_to_generic((unsigned)(v_r5 + (0)))), v_r3);" in code, code)
code, _, interpreted = kb_triton.cuda_of_ptx(PTX.replace("st.shared.b32", "st.volatile.shared.b32"), "k")
check("an instruction the C++ form leaves to the interpreter", "memory-model" in interpreted and "asm volatile(" in code, interpreted)
for bad in (PTX.replace("ret;", "call.uni __assertfail, (%rd1);\n\tret;"),):
    try:
        kb_triton.cuda_of_ptx(bad, "k")
        failures.append("PTX that calls a function was accepted by the C++ form")
    except Verdict as v:
        check("PTX that calls a function, C++ form", v.status == "unsupported", v.reason)

# For a GPU (the cuda backend): the PTX alone, no C++ form, and the entry's thread bound as the kernel's
# __launch_bounds__, so that ptxas allocates registers for the threads Triton launches (its .reqntid).
code, params, interpreted = kb_triton.cuda_of_ptx(PTX, "cuset_triton_0_k", simulated=False)
check("the GPU's form is the PTX alone", interpreted == "" and "CUSET_SIM_KERNEL_LIBRARY" not in code and "asm volatile(" in code, code[:300])
check("the GPU's form keeps .reqntid", 'extern "C" __global__ void __launch_bounds__(128) cuset_triton_0_k(' in code, code[:200])
code, _, _ = kb_triton.cuda_of_ptx(PTX.replace(".reqntid 128", ".maxntid 64, 2, 1"), "k", simulated=False)
check("a 3-d .maxntid is its product", "__launch_bounds__(128) k(" in code, code[:200])
code, _, _ = kb_triton.cuda_of_ptx(PTX.replace(".reqntid 128", ""), "k", simulated=False)
check("no bound, none made up", "__launch_bounds__" not in code, code[:200])
for metadata, why in [({"num_ctas": 2}, "clusters"), ({"launch_pdl": True}, "launch_pdl"), ({"launch_cooperative_grid": True}, "launch_cooperative_grid")]:
    try:
        kb_triton._refuse_launch_options({"num_ctas": 1, **metadata})
        failures.append(f"a launch with {why} was accepted")
    except Verdict as v:
        check(f"a launch with {why}", v.status == "unsupported" and why in v.reason, v.reason)
kb_triton._refuse_launch_options({"num_ctas": 1, "cluster_dims": (1, 1, 1), "launch_pdl": False})  # Triton's defaults: nothing refused
kb_triton.TARGETS.update({"sm_90a"})
check("the plan names the architecture-specific target", kb_triton.recorded_sources().get("target") == "sm_90a", kb_triton.recorded_sources())
kb_triton.TARGETS.clear()
check("no architecture-specific target, none named", "target" not in kb_triton.recorded_sources(), kb_triton.recorded_sources())

# Triton's binder specialises on data_ptr() % 16: a stand-in must have the GPU allocation's alignment
# (256 bytes) plus the view's byte offset.
base = torch.empty(1024, device="meta")
for offset in (0, 1, 3, 4, 64):
    view = base[offset:]
    proxy = kb_triton._aligned_like(view)
    check(f"alignment of a view at element {offset}", proxy.data_ptr() % 256 == offset * 4 % 256 and proxy.dtype == view.dtype,
          (proxy.data_ptr() % 256, offset * 4))

# triton.autotune for a GPU: each kept configuration's launch is captured for the GPU worker to time;
# one whose shared memory no block can have is left out as Triton's timing leaves it out (OutOfResources),
# and the first that fits is then the step's own; a pre_hook keeps the CPU's choice on the GPU too.
if kb_triton.triton is not None:
    import triton

    class FakeKernel:
        """Stands for a JITFunction: its launch, captured or recorded, as kb_triton.launch makes it."""
        arg_names = ["x", "n", "BLOCK"]
        recorded = []

        def __init__(self):
            def k(x, n, BLOCK):
                pass
            self.fn = k  # what Autotuner reads its name from

        def run(self, *args, BLOCK, **kwargs):
            step = {"kernel": f"k{BLOCK}", "grid": [4096 // BLOCK, 1, 1], "block": [128, 1, 1], "shared": BLOCK * 1024, "args": []}
            if BLOCK == 512:
                raise kb_triton.unsupported("a configuration this harness does not run")
            if kb_triton._CAPTURED:
                kb_triton._CAPTURED[-1].append(step)
            else:
                FakeKernel.recorded.append(dict(step, autotune=kb_triton._TUNED[-1] if kb_triton._TUNED else None))

    def tune(blocks, pre_hook=None):
        t = triton.autotune(configs=[triton.Config({"BLOCK": b}, pre_hook=pre_hook) for b in blocks], key=["n"])(FakeKernel())
        kb_triton.autotuned(t, (torch.empty(4), 4096), {})

    kb_triton.configure(90)
    kb_triton.CHOICES.clear()
    FakeKernel.recorded.clear()
    tune([256, 128, 512, 64])
    step = FakeKernel.recorded[-1]
    tuned = step["autotune"] or {}
    check("the step is the first configuration that fits a block", step["kernel"] == "k128", step)
    check("every configuration Triton would time, in order", [a["kernel"] for a in tuned.get("alternatives", [])] == ["k128", "k64"], tuned)
    check("configurations named as Triton prints them", [c.split(",")[0] for c in tuned.get("configs", [])] == ["BLOCK: 128", "BLOCK: 64"], tuned)
    check("Triton's tuning key: the key arguments and the tensors' dtypes", tuned.get("key") == "k(4096, torch.float32)", tuned)
    log = "\n".join(kb_triton.CHOICES)
    check("the configuration over the shared memory limit is named", "BLOCK: 256" in log and "262144 bytes of shared memory" in log, log)
    check("the configuration not run here is named", "BLOCK: 512" in log and "not timed on the GPU" in log, log)
    kb_triton.CHOICES.clear()
    tune([128, 64], pre_hook=lambda nargs: None)
    check("a pre_hook: the first configuration on the GPU too", FakeKernel.recorded[-1]["kernel"] == "k128" and FakeKernel.recorded[-1]["autotune"] is None,
          FakeKernel.recorded[-1])
    check("a pre_hook is named", "pre_hook" in "\n".join(kb_triton.CHOICES), kb_triton.CHOICES)
    kb_triton.CHOICES.clear()
    tune([256, 64])
    check("one configuration left: no timing, that one taken", FakeKernel.recorded[-1]["kernel"] == "k64" and FakeKernel.recorded[-1]["autotune"] is None
          and "the only one of 2 kept configurations" in kb_triton.CHOICES[-1], (FakeKernel.recorded[-1], kb_triton.CHOICES))
    kb_triton.configure(None)
    kb_triton.CHOICES.clear()
    tune([128, 64])
    check("the simulator's recording carries no configurations", FakeKernel.recorded[-1]["autotune"] is None, FakeKernel.recorded[-1])
    check("the simulator's log names its choice", len(kb_triton.CHOICES) == 1 and kb_triton.CHOICES[0].startswith("autotune k: BLOCK: 128")
          and kb_triton.CHOICES[0].endswith("(the first of 2 kept)"), kb_triton.CHOICES)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("kb_triton: ok")
