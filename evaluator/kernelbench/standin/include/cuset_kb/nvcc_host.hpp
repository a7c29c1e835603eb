#pragma once
// What nvcc gives the host code of every .cu file beyond <cuda_runtime.h>: the min/max overloads of
// crt/math_functions.hpp, callable from host functions (launch geometry: min(blocks, 65535)). The host
// build includes this in cuda_sources only, as nvcc does: g++ compiles cpp_sources without them.
#define CUSET_KB_MIN_MAX(R, A, B)                                                              \
  inline R min(const A a, const B b) { return a < b ? static_cast<R>(a) : static_cast<R>(b); } \
  inline R max(const A a, const B b) { return a > b ? static_cast<R>(a) : static_cast<R>(b); }
CUSET_KB_MIN_MAX(int, int, int)
CUSET_KB_MIN_MAX(unsigned int, unsigned int, unsigned int)
CUSET_KB_MIN_MAX(unsigned int, int, unsigned int)
CUSET_KB_MIN_MAX(unsigned int, unsigned int, int)
CUSET_KB_MIN_MAX(long int, long int, long int)
CUSET_KB_MIN_MAX(unsigned long int, unsigned long int, unsigned long int)
CUSET_KB_MIN_MAX(unsigned long int, long int, unsigned long int)
CUSET_KB_MIN_MAX(unsigned long int, unsigned long int, long int)
CUSET_KB_MIN_MAX(long long int, long long int, long long int)
CUSET_KB_MIN_MAX(unsigned long long int, unsigned long long int, unsigned long long int)
CUSET_KB_MIN_MAX(unsigned long long int, long long int, unsigned long long int)
CUSET_KB_MIN_MAX(unsigned long long int, unsigned long long int, long long int)
CUSET_KB_MIN_MAX(float, float, float)
CUSET_KB_MIN_MAX(double, double, double)
CUSET_KB_MIN_MAX(double, float, double)
CUSET_KB_MIN_MAX(double, double, float)
#undef CUSET_KB_MIN_MAX
