void f() { long r; asm volatile("syscall" : "=a"(r) : "a"(102L) : "rcx"); asm("mov.u32 %0, %%laneid;" : "=r"(r)); }
#define X(r) asm("mov.u32 %0, %%tid.x;" \
 : "=r"(r))
