#pragma once
// glibc's malloc raises its mmap threshold each time a large block is freed (up to 32 MiB), so that
// after the first step LibTorch's CPU activations (megabytes each, freed every step) come from the heap,
// which fragments and is not given back: the process's resident memory grows by gigabytes over what is
// live, and LoRA's saving (no weight gradients, no AdamW moments) disappeared in it
// (docs/benchmarks.md "Training memory per mode"). A fixed threshold keeps every block of 128 KiB or
// more in its own mapping, returned to the system when freed.
namespace cuset {

// Idempotent; call before the first large tensor. A no-op where malloc is not glibc's.
void keepLargeAllocationsMapped();

}  // namespace cuset
