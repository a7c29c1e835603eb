// Inline PTX on the simulator: each supported instruction against a known answer (exact: integer
// values, copies and conversions with known bits), ldmatrix and mma.sync element by element against
// the PTX ISA's fragment tables, and what is not simulated named as such.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>

#include "cuset/evaluator/compile/sim_inline_ptx.hpp"
#include "sim_test_util.hpp"

namespace cuset {
namespace {

using test::SimModule;

class SimPtx : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cuset_sim::start_host_threads(2); }
};

TEST_F(SimPtx, SpecialRegistersAndMoves) {
  SimModule m(R"(extern "C" __global__ void k(unsigned* out) {
  unsigned lane, warp, tid, ntid, ctaid, nctaid, lt, lo, hi;
  unsigned long long clk, timer, repacked;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  asm("mov.u32 %0, %%tid.x;\n\tmov.u32 %1, %%ntid.x;" : "=r"(tid), "=r"(ntid));
  asm("mov.u32 %0, %%ctaid.x; mov.u32 %1, %%nctaid.x; mov.u32 %2, %%lanemask_lt;" : "=r"(ctaid), "=r"(nctaid), "=r"(lt));
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(clk));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(timer));
  asm("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"(0x1122334455667788ull));
  asm("mov.b64 %0, {%1, %2};" : "=l"(repacked) : "r"(hi), "r"(lo));
  unsigned* o = out + 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  o[0] = lane; o[1] = warp; o[2] = tid; o[3] = ntid; o[4] = ctaid; o[5] = nctaid; o[6] = lt;
  o[7] = clk != 0 && timer != 0 && lo == 0x55667788u && hi == 0x11223344u && repacked == 0x5566778811223344ull;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  EXPECT_FALSE(m.fibers);  // nothing collective in it
  std::vector<unsigned> out(2 * 64 * 8, 99);
  unsigned* p = out.data();
  ASSERT_TRUE(m.launch("k", dim3(2), dim3(64), {&p}).ok);
  for (unsigned b = 0; b < 2; ++b) {
    for (unsigned t = 0; t < 64; ++t) {
      const unsigned* o = &out[8 * (b * 64 + t)];
      const std::vector<unsigned> got(o, o + 8);
      EXPECT_EQ(got, (std::vector<unsigned>{t % 32, t / 32, t, 64, b, 2, (1u << (t % 32)) - 1, 1})) << b << " " << t;
    }
  }
}

TEST_F(SimPtx, LoadsAndStoresWithStateSpacesAndCacheQualifiers) {
  SimModule m(R"(extern "C" __global__ void k(const float* x, float* y, const signed char* bytes, int* ints) {
  __shared__ __align__(16) float tile[64];
  const int t = threadIdx.x;
  float v, w;
  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(x + t));
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  asm volatile("st.shared.f32 [%0], %1;" :: "r"(base + 4 * t), "f"(v * 2.0f));
  __syncthreads();
  asm volatile("ld.shared.f32 %0, [%1+4];" : "=f"(w) : "r"(base + 4 * ((t + 1) % 64) - 4));
  asm volatile("st.global.wt.f32 [%0], %1;" :: "l"(y + t), "f"(w));
  if (t < 16) {
    float4 q;
    asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "l"(x + 4 * t));
    asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(y + 64 + 4 * t), "f"(q.x), "f"(q.y), "f"(q.z), "f"(q.w));
  }
  int s;
  asm("ld.global.s8 %0, [%1];" : "=r"(s) : "l"(bytes + t));
  ints[t] = s;
}
extern "C" __global__ void misaligned(const float* x, float* y) {
  float4 q;
  asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "l"(x + 1));
  y[0] = q.x;
}
extern "C" __global__ void generic(float* y) {
  __shared__ float s[4];
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "l"(s));
  y[0] = v;
}
extern "C" __global__ void global_as_shared(float* y) {
  unsigned long long a;
  asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(y));
  y[0] = static_cast<float>(a);
})",
              {"k", "misaligned", "generic", "global_as_shared"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<float> x(64), y(128, -1.0f);
  std::iota(x.begin(), x.end(), 1.0f);
  std::vector<signed char> bytes(64);
  for (int i = 0; i < 64; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<signed char>(i * 3 - 90);
  std::vector<int> ints(64);
  float *px = x.data(), *py = y.data();
  signed char* pb = bytes.data();
  int* pi = ints.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(64), {&px, &py, &pb, &pi}).ok);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(y[static_cast<std::size_t>(t)], 2.0f * x[static_cast<std::size_t>((t + 1) % 64)]) << t;  // shared address arithmetic
    EXPECT_EQ(y[64 + static_cast<std::size_t>(t)], x[static_cast<std::size_t>(t)]) << t;               // vector load and store
    EXPECT_EQ(ints[static_cast<std::size_t>(t)], t * 3 - 90) << t;                                     // sign extension
  }
  auto outcome = m.launch("misaligned", dim3(1), dim3(1), {&px, &py});
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("misaligned address"), std::string::npos) << outcome.error;
  outcome = m.launch("generic", dim3(1), dim3(1), {&py});
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("is not a shared-memory address"), std::string::npos) << outcome.error;
  outcome = m.launch("global_as_shared", dim3(1), dim3(1), {&py});  // a GPU would give a meaningless address
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("is not in shared memory"), std::string::npos) << outcome.error;
}

// cvta both ways, guards (negated too), activemask, and the instructions without effect here.
TEST_F(SimPtx, AddressConversionsGuardsAndNoOps) {
  SimModule m(R"(extern "C" __global__ void k(unsigned* out) {
  __shared__ unsigned cell[32];
  const unsigned t = threadIdx.x;
  unsigned s, v, mask, g;
  unsigned long long back;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(&cell[t]));  // CUTLASS's idiom
  asm volatile("st.shared.u32 [%0], %1;" :: "r"(s), "r"(t * 3));
  asm volatile("membar.cta;\n\tfence.acq_rel.gpu;\n\tprefetch.global.L2 [%0];" :: "l"(out));
  asm volatile("cvta.shared.u64 %0, %1;" : "=l"(back) : "l"(static_cast<unsigned long long>(s)));
  v = *reinterpret_cast<const unsigned*>(back);
  asm volatile("activemask.b32 %0;" : "=r"(mask));
  asm("{ .reg .pred odd; setp.ne.u32 odd, %1, 0; mov.u32 %0, 1; @odd mov.u32 %0, 2; @!odd add.u32 %0, %0, 10; }" : "=r"(g) : "r"(t % 2));
  out[t] = v;
  out[32 + t] = mask;
  out[64 + t] = g;
  __syncwarp();  // no lane exits before every lane has asked (the simulator's live lanes are the active ones)
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<unsigned> out(96);
  unsigned* p = out.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(32), {&p}).ok);
  // Dynamic shared memory has shared addresses too.
  SimModule dynamic(R"(extern "C" __global__ void d(unsigned* out) {
  extern __shared__ unsigned buffer[];
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(&buffer[threadIdx.x]));
  asm volatile("st.shared.u32 [%0], %1;" :: "r"(s), "r"(threadIdx.x + 7));
  out[threadIdx.x] = buffer[threadIdx.x];
})",
                    {"d"});
  ASSERT_TRUE(dynamic.ok()) << dynamic.compileLog;
  std::vector<unsigned> dout(32);
  unsigned* pd = dout.data();
  const auto outcome = dynamic.launch("d", dim3(1), dim3(32), {&pd}, 32 * sizeof(unsigned));
  ASSERT_TRUE(outcome.ok) << outcome.error;
  for (unsigned t = 0; t < 32; ++t) EXPECT_EQ(dout[t], t + 7) << t;
  for (unsigned t = 0; t < 32; ++t) {
    EXPECT_EQ(out[t], t * 3) << t;             // stored through the shared address, read back through the generic one
    EXPECT_EQ(out[32 + t], 0xffffffffu) << t;  // every lane live
    EXPECT_EQ(out[64 + t], t % 2 ? 2u : 11u) << t;
  }
}

TEST_F(SimPtx, ConversionsRoundAndSaturateAsThePtxIsaSays) {
  SimModule m(R"(extern "C" __global__ void k(const float* f, unsigned* u) {
  unsigned short h;
  int r;
  unsigned b, p;
  float g;
  long long w;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f[0])); u[0] = h;
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(f[1])); u[1] = r;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(r) : "f"(f[2])); u[2] = r;
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(r) : "f"(f[3])); u[3] = r;
  asm("cvt.sat.u8.s32 %0, %1;" : "=r"(b) : "r"(300)); u[4] = b;
  asm("cvt.sat.u8.s32 %0, %1;" : "=r"(b) : "r"(-5)); u[5] = b;
  asm("cvt.u8.u32 %0, %1;" : "=r"(b) : "r"(300)); u[6] = b;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(f[0]), "f"(f[4])); u[7] = p;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(f[0]), "f"(f[4])); u[8] = p;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(p) : "f"(f[5])); u[9] = p;
  asm("cvt.f32.f16 %0, %1;" : "=f"(g) : "h"(h)); u[10] = __float_as_uint(g);
  asm("cvt.s64.s32 %0, %1;" : "=l"(w) : "r"(-7)); u[11] = static_cast<unsigned>(w >> 32);
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(f[6])); u[12] = r;
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(f[7])); u[13] = r;
  asm("cvt.rz.f16.f32 %0, %1;" : "=h"(h) : "f"(f[8])); u[14] = h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f[8])); u[15] = h;
  asm("cvt.rn.f32.s32 %0, %1;" : "=f"(g) : "r"(-3)); u[16] = __float_as_uint(g);
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<float> f = {1.5f, -2.7f, 2.5f, 3.5f, -2.0f, std::bit_cast<float>(0x3f801000u), 1e10f, NAN, 1.00146484375f};
  std::vector<unsigned> u(17, 0xdeadbeef);
  float* pf = f.data();
  unsigned* pu = u.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(1), {&pf, &pu}).ok);
  EXPECT_EQ(u[0], 0x3e00u);               // 1.5 in half
  EXPECT_EQ(static_cast<int>(u[1]), -2);  // toward zero
  EXPECT_EQ(static_cast<int>(u[2]), 2);   // nearest, ties to even
  EXPECT_EQ(static_cast<int>(u[3]), 4);
  EXPECT_EQ(u[4], 255u);  // .sat clamps
  EXPECT_EQ(u[5], 0u);
  EXPECT_EQ(u[6], 44u);          // 300 mod 256
  EXPECT_EQ(u[7], 0x3e00c000u);  // a in the upper half, b in the lower
  EXPECT_EQ(u[8], 0x3fc0c000u);
  EXPECT_EQ(u[9], 0x3f802000u);  // a tie at 13 bits rounds away from zero
  EXPECT_EQ(u[10], std::bit_cast<unsigned>(1.5f));
  EXPECT_EQ(u[11], 0xffffffffu);                // sign extension
  EXPECT_EQ(static_cast<int>(u[12]), INT_MAX);  // float to int saturates
  EXPECT_EQ(u[13], 0u);                         // NaN to int is 0
  EXPECT_EQ(u[14], 0x3c01u);                    // 1 + 1.5 ulp: toward zero
  EXPECT_EQ(u[15], 0x3c02u);                    // nearest even
  EXPECT_EQ(u[16], std::bit_cast<unsigned>(-3.0f));
}

TEST_F(SimPtx, IntegerArithmeticAndBitOperations) {
  SimModule m(R"(extern "C" __global__ void k(const unsigned* in, unsigned* u) {
  const unsigned a = in[0], b = in[1];
  unsigned r, hi;
  unsigned long long w;
  asm("add.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); u[0] = r;
  asm("sub.s32 %0, %1, %2;" : "=r"(r) : "r"(b), "r"(a)); u[1] = r;
  asm("mul.hi.u32 %0, %1, %2;" : "=r"(hi) : "r"(a), "r"(a)); u[2] = hi;
  asm("mul.wide.u32 %0, %1, %2;" : "=l"(w) : "r"(a), "r"(a)); u[3] = static_cast<unsigned>(w >> 32); u[4] = static_cast<unsigned>(w);
  asm("mad.lo.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(-3), "r"(5), "r"(100)); u[5] = r;
  asm("shr.s32 %0, %1, 4;" : "=r"(r) : "r"(-256)); u[6] = r;
  asm("shr.u32 %0, %1, 4;" : "=r"(r) : "r"(0x80000000u)); u[7] = r;
  asm("{ .reg .pred p; setp.lt.s32 p, %1, %2; selp.b32 %0, 11, 22, p; }" : "=r"(r) : "r"(-1), "r"(1)); u[8] = r;
  asm("{ .reg .pred p; setp.lo.u32 p, %1, %2; selp.b32 %0, 11, 22, p; }" : "=r"(r) : "r"(-1), "r"(1)); u[9] = r;
  asm("prmt.b32 %0, %1, %2, 0x5140;" : "=r"(r) : "r"(0x33221100u), "r"(0x77665544u)); u[10] = r;
  asm("prmt.b32 %0, %1, %2, 0x0009;" : "=r"(r) : "r"(0x0000f000u), "r"(0u)); u[11] = r;
  asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(r) : "r"(0xff00ff00u), "r"(0xf0f0f0f0u), "r"(0xccccccccu)); u[12] = r;
  asm("bfe.u32 %0, %1, 8, 8;" : "=r"(r) : "r"(0x12345678u)); u[13] = r;
  asm("bfe.s32 %0, %1, 4, 8;" : "=r"(r) : "r"(0x00000f80u)); u[14] = r;
  asm("bfi.b32 %0, %1, %2, 8, 8;" : "=r"(r) : "r"(0xabu), "r"(0x11111111u)); u[15] = r;
  asm("popc.b32 %0, %1;" : "=r"(r) : "r"(0xf0f0f0f1u)); u[16] = r;
  asm("clz.b32 %0, %1;" : "=r"(r) : "r"(0x00010000u)); u[17] = r;
  asm("brev.b32 %0, %1;" : "=r"(r) : "r"(1u)); u[18] = r;
  asm("abs.s32 %0, %1;" : "=r"(r) : "r"(-7)); u[19] = r;
  asm("min.s32 %0, %1, %2;" : "=r"(r) : "r"(-7), "r"(3)); u[20] = r;
  asm("max.u32 %0, %1, %2;" : "=r"(r) : "r"(-7), "r"(3)); u[21] = r;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<unsigned> in = {0x89abcdefu, 0x12345678u}, u(22, 0xdeadbeefu);
  unsigned *pin = in.data(), *pu = u.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(1), {&pin, &pu}).ok);
  const unsigned long long square = 0x89abcdefull * 0x89abcdefull;
  EXPECT_EQ(u[0], 0x89abcdefu + 0x12345678u);
  EXPECT_EQ(u[1], 0x12345678u - 0x89abcdefu);
  EXPECT_EQ(u[2], static_cast<unsigned>(square >> 32));
  EXPECT_EQ(u[3], static_cast<unsigned>(square >> 32));
  EXPECT_EQ(u[4], static_cast<unsigned>(square));
  EXPECT_EQ(static_cast<int>(u[5]), 85);
  EXPECT_EQ(static_cast<int>(u[6]), -16);  // arithmetic shift
  EXPECT_EQ(u[7], 0x08000000u);            // logical shift
  EXPECT_EQ(u[8], 11u);                    // -1 < 1 signed
  EXPECT_EQ(u[9], 22u);                    // 0xffffffff < 1 unsigned is false
  EXPECT_EQ(u[10], 0x55114400u);           // bytes 0, 4, 1, 5 of {b, a}
  EXPECT_EQ(u[11], 0x000000ffu);           // selector 9: byte 1 (0xf0) with its sign bit replicated
  EXPECT_EQ(u[12], (0xff00ff00u & 0xf0f0f0f0u) | (0xff00ff00u & 0xccccccccu) | (0xf0f0f0f0u & 0xccccccccu));  // majority
  EXPECT_EQ(u[13], 0x56u);
  EXPECT_EQ(u[14], 0xfffffff8u);  // 0xf8 sign-extended from bit 11
  EXPECT_EQ(u[15], 0x1111ab11u);
  EXPECT_EQ(u[16], 17u);
  EXPECT_EQ(u[17], 15u);
  EXPECT_EQ(u[18], 0x80000000u);
  EXPECT_EQ(u[19], 7u);
  EXPECT_EQ(static_cast<int>(u[20]), -7);
  EXPECT_EQ(u[21], 0xfffffff9u);
}

TEST_F(SimPtx, ShufflesFollowTheClampAndSegmentMask) {
  SimModule m(R"(extern "C" __global__ void k(int* out) {
  const int t = threadIdx.x, v = t * 10;
  int r;
  unsigned p;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(1), "r"(0x1f), "r"(0xffffffff));
  out[t] = r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(3), "r"(0x1f), "r"(0xffffffff));
  out[64 + t] = r;
  // up by one in segments of 8 (c = (32 - 8) << 8), with the predicate
  asm volatile("{ .reg .pred ok;\n shfl.sync.up.b32 %0|ok, %2, %3, %4, %5;\n selp.u32 %1, 1, 0, ok; }"
               : "=r"(r), "=r"(p) : "r"(v), "r"(1), "r"(0x1800), "r"(0xffffffff));
  out[128 + t] = r;
  out[192 + t] = p;
  // down by two in segments of 16 (c = (32 - 16) << 8 | 31)
  asm volatile("shfl.sync.down.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(2), "r"(0x101f), "r"(0xffffffff));
  out[256 + t] = r;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  EXPECT_TRUE(m.fibers);
  std::vector<int> out(320, -1);
  int* p = out.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(64), {&p}).ok);
  for (int t = 0; t < 64; ++t) {
    const auto i = static_cast<std::size_t>(t);
    const int lane = t % 32;
    EXPECT_EQ(out[i], (t ^ 1) * 10) << t;
    EXPECT_EQ(out[64 + i], (t - lane + 3) * 10) << t;
    EXPECT_EQ(out[128 + i], lane % 8 != 0 ? (t - 1) * 10 : t * 10) << t;
    EXPECT_EQ(out[192 + i], lane % 8 != 0 ? 1 : 0) << t;
    EXPECT_EQ(out[256 + i], lane % 16 < 14 ? (t + 2) * 10 : t * 10) << t;
  }
}

TEST_F(SimPtx, BarriersSynchroniseTheBlockAndTheWarp) {
  SimModule m(R"(extern "C" __global__ void k(const float* in, float* out) {
  __shared__ float tile[128];
  const int t = threadIdx.x;
  tile[t] = in[t];
  asm volatile("bar.sync 0;" ::: "memory");
  out[t] = tile[127 - t];
  asm volatile("barrier.sync.aligned 0;");
  tile[t] = 2.0f * tile[t];
  asm volatile("bar.warp.sync %0;" :: "r"(0xffffffff));
  out[128 + t] = tile[(t / 32) * 32 + (t + 1) % 32];
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  EXPECT_TRUE(m.fibers);
  std::vector<float> in(128), out(256);
  std::iota(in.begin(), in.end(), 0.0f);
  float *pi = in.data(), *po = out.data();
  for (bool reverse : {false, true}) {
    ASSERT_TRUE(m.launch("k", dim3(1), dim3(128), {&pi, &po}, 0, reverse).ok);
    for (int t = 0; t < 128; ++t) {
      EXPECT_EQ(out[static_cast<std::size_t>(t)], static_cast<float>(127 - t)) << t;
      EXPECT_EQ(out[128 + static_cast<std::size_t>(t)], 2.0f * static_cast<float>((t / 32) * 32 + (t + 1) % 32)) << t;
    }
  }
}

// cp.async lands at wait_group/wait_all, zero-fills past the source size or when ignore-src holds,
// and shares its groups with the pipeline primitives.
TEST_F(SimPtx, AsyncCopiesLandWhenTheirGroupIsWaitedFor) {
  SimModule m(R"(#include <cuda_pipeline.h>
extern "C" __global__ void k(const float* x, float* out, int wait) {
  __shared__ __align__(16) float tile[2][64];
  const int t = threadIdx.x;
  for (int i = 0; i < 4; ++i) tile[0][4 * t + i] = tile[1][4 * t + i] = -1.0f;
  __syncthreads();
  const unsigned d0 = __cvta_generic_to_shared(&tile[0][4 * t]), d1 = __cvta_generic_to_shared(&tile[1][4 * t]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d0), "l"(x + 4 * t));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 16, %2;" :: "r"(d1), "l"(x + 64 + 4 * t), "r"(t % 2 ? 0 : 8));
  __pipeline_commit();
  out[t] = tile[0][4 * t];
  if (wait) asm volatile("cp.async.wait_group 1;");
  __syncthreads();
  out[16 + t] = tile[0][4 * ((t + 1) % 16)];
  out[32 + t] = tile[1][4 * t];
  if (wait) asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  for (int i = 0; i < 4; ++i) out[48 + 4 * t + i] = tile[1][4 * t + i];
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n cp.async.ca.shared.global [%0], [%1], 4, p;\n}" :: "r"(d0), "l"(x), "r"(t % 2));
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[112 + t] = tile[0][4 * t];
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<float> x(128), out(128, 7.0f);
  std::iota(x.begin(), x.end(), 1.0f);
  float *px = x.data(), *po = out.data();
  int wait = 1;
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(16), {&px, &po, &wait}).ok);
  for (int t = 0; t < 16; ++t) {
    const auto i = static_cast<std::size_t>(t);
    EXPECT_EQ(out[i], -1.0f) << t;                                               // nothing landed before a wait
    EXPECT_EQ(out[16 + i], x[4 * static_cast<std::size_t>((t + 1) % 16)]) << t;  // group 0 landed
    EXPECT_EQ(out[32 + i], -1.0f) << t;                                          // group 1 not yet
    for (std::size_t e = 0; e < 4; ++e) {
      const float expected = (t % 2 == 0 && e < 2) ? x[64 + 4 * i + e] : 0.0f;  // 8 of 16 bytes, or none
      EXPECT_EQ(out[48 + 4 * i + e], expected) << t << " " << e;
    }
    EXPECT_EQ(out[112 + i], t % 2 ? 0.0f : x[0]) << t;  // ignore-src zero-fills
  }
  wait = 0;  // without the waits, the tiles keep what was there before
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(16), {&px, &po, &wait}).ok);
  EXPECT_EQ(out[16], -1.0f);
  EXPECT_EQ(out[48], -1.0f);
}

// ldmatrix: lane l receives of matrix i the pair at row l/4, columns 2(l%4), 2(l%4)+1, or with .trans
// the pair at rows 2(l%4), 2(l%4)+1 of column l/4 (PTX ISA, "Warp-level matrix load instruction").
TEST_F(SimPtx, LdmatrixDistributesRowsAsThePtxIsaTable) {
  SimModule m(R"(extern "C" __global__ void k(unsigned* out) {
  __shared__ __align__(16) unsigned short mats[4][8][8];
  const int l = threadIdx.x;
  for (int e = l; e < 256; e += 32) mats[e / 64][(e / 8) % 8][e % 8] = static_cast<unsigned short>(e);
  __syncwarp();
  const unsigned row = __cvta_generic_to_shared(&mats[l / 8][l % 8][0]);
  unsigned r[4];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(row));
  for (int i = 0; i < 4; ++i) out[l * 16 + i] = r[i];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(row));
  for (int i = 0; i < 4; ++i) out[l * 16 + 4 + i] = r[i];
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(row));
  out[l * 16 + 8] = r[0];
  out[l * 16 + 9] = r[1];
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.b16 %0, [%1];" : "=r"(r[0]) : "l"(&mats[0][l % 8][0]));
  out[l * 16 + 10] = r[0];
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<unsigned> out(32 * 16, 0);
  unsigned* p = out.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(32), {&p}).ok);
  auto element = [](unsigned i, unsigned r, unsigned c) { return i * 64 + r * 8 + c; };
  auto pair = [](unsigned lo, unsigned hi) { return lo | (hi << 16); };
  for (unsigned l = 0; l < 32; ++l) {
    for (unsigned i = 0; i < 4; ++i) {
      EXPECT_EQ(out[l * 16 + i], pair(element(i, l / 4, 2 * (l % 4)), element(i, l / 4, 2 * (l % 4) + 1))) << l << " x4 " << i;
      EXPECT_EQ(out[l * 16 + 4 + i], pair(element(i, 2 * (l % 4), l / 4), element(i, 2 * (l % 4) + 1, l / 4))) << l << " trans " << i;
    }
    EXPECT_EQ(out[l * 16 + 8], out[l * 16 + 0]) << l;
    EXPECT_EQ(out[l * 16 + 9], out[l * 16 + 1]) << l;
    EXPECT_EQ(out[l * 16 + 10], out[l * 16 + 0]) << l;  // generic addresses
  }
}

// stmatrix writes what ldmatrix reads: a round trip copies each 8x8 matrix, and storing with .trans
// what was loaded without it transposes each one.
TEST_F(SimPtx, StmatrixIsLdmatrixInReverse) {
  SimModule m(R"(extern "C" __global__ void k(unsigned short* copy, unsigned short* transposed) {
  __shared__ __align__(16) unsigned short src[4][8][8], dst[4][8][8], tdst[4][8][8];
  const int l = threadIdx.x;
  for (int e = l; e < 256; e += 32) src[e / 64][(e / 8) % 8][e % 8] = static_cast<unsigned short>(e);
  __syncwarp();
  unsigned r[4];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(&src[l / 8][l % 8][0]))));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(&dst[l / 8][l % 8][0]))), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(&tdst[l / 8][l % 8][0]))), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
  __syncwarp();
  for (int e = l; e < 256; e += 32) {
    copy[e] = dst[e / 64][(e / 8) % 8][e % 8];
    transposed[e] = tdst[e / 64][(e / 8) % 8][e % 8];
  }
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<unsigned short> copy(256), transposed(256);
  unsigned short *pc = copy.data(), *pt = transposed.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(32), {&pc, &pt}).ok);
  for (unsigned e = 0; e < 256; ++e) {
    const unsigned i = e / 64, r = (e / 8) % 8, c = e % 8;
    EXPECT_EQ(copy[e], e) << e;
    EXPECT_EQ(transposed[e], i * 64 + c * 8 + r) << e;
  }
}

// atom and red on global and shared memory, from blocks running on two host threads at once.
TEST_F(SimPtx, AtomicsAreAtomicAcrossBlocks) {
  SimModule m(R"(extern "C" __global__ void k(unsigned* counter, float* sum, unsigned* seen, int* best, unsigned* wrap, unsigned long long* last) {
  __shared__ unsigned lock;
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) lock = 0;
  __syncthreads();
  unsigned old;
  asm volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter));
  seen[old] = 1;
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(sum), "f"(0.5f));
  asm volatile("red.relaxed.gpu.global.max.s32 [%0], %1;" :: "l"(best), "r"(static_cast<int>(t) - 100));
  asm volatile("atom.global.inc.u32 %0, [%1], 9;" : "=r"(old) : "l"(wrap));
  unsigned won;
  asm volatile("atom.shared.cas.b32 %0, [%1], 0, %2;" : "=r"(won) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(&lock))), "r"(t + 1));
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long prev;
    asm volatile("atom.global.exch.b64 %0, [%1], %2;" : "=l"(prev) : "l"(last), "l"(static_cast<unsigned long long>(lock)));
  }
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  unsigned counter = 0, wrap = 0;
  float sum = 0.0f;
  int best = -1000;
  unsigned long long last = 0;
  std::vector<unsigned> seen(256, 0);
  unsigned *pc = &counter, *ps = seen.data(), *pw = &wrap;
  float* psum = &sum;
  int* pb = &best;
  unsigned long long* pl = &last;
  ASSERT_TRUE(m.launch("k", dim3(4), dim3(64), {&pc, &psum, &ps, &pb, &pw, &pl}).ok);
  EXPECT_EQ(counter, 256u);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1u), 256);  // every old value exactly once
  EXPECT_EQ(sum, 128.0f);
  EXPECT_EQ(best, 155);
  EXPECT_EQ(wrap, 256u % 10);  // inc wraps to 0 past 9
  EXPECT_GE(last, 1u);         // some block's winner: the first thread to swap its t + 1 in
  EXPECT_LE(last, 256u);
}

struct MmaCase {
  int k;
  const char* input;  // f16 or bf16
  bool f32Accumulator;
};

// A kernel that builds each lane's fragments from the PTX ISA's tables (written out, not computed),
// runs one mma.sync and scatters D by the same tables.
std::string mmaKernel(const MmaCase& c, const std::string& name) {
  const int aCount = c.k == 16 ? 8 : 4, bCount = c.k == 16 ? 4 : 2;
  const std::string acc = c.f32Accumulator ? "f32" : "f16";
  int n = 0;  // the next operand number
  auto list = [&](int count) {
    std::string l = "{";
    for (int i = 0; i < count; ++i) l += fmt::format("{}%{}", i ? ", " : "", n++);
    return l + "}";
  };
  const int cRegs = c.f32Accumulator ? 4 : 2;
  const std::string d = list(cRegs), a = list(aCount / 2), b = list(bCount / 2), cc = list(cRegs);
  std::string outputs, inputs;
  for (int i = 0; i < cRegs; ++i) outputs += fmt::format("{}\"={}\"(d[{}])", i ? ", " : "", c.f32Accumulator ? "f" : "r", i);
  for (int i = 0; i < aCount / 2; ++i) inputs += fmt::format("\"r\"(a[{}]), ", i);
  for (int i = 0; i < bCount / 2; ++i) inputs += fmt::format("\"r\"(b[{}]), ", i);
  for (int i = 0; i < cRegs; ++i) inputs += fmt::format("{}\"{}\"(cr[{}])", i ? ", " : "", c.f32Accumulator ? "f" : "r", i);
  return fmt::format(R"(
extern "C" __global__ void {0}(const unsigned short* A, const unsigned short* B, const float* C, const unsigned short* Ch, float* D, unsigned short* Dh) {{
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const int aRow[8] = {{g, g, g + 8, g + 8, g, g, g + 8, g + 8}};
  const int aCol[8] = {{2 * t, 2 * t + 1, 2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9, 2 * t + 8, 2 * t + 9}};
  const int bRow[4] = {{2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9}};
  const int cRow[4] = {{g, g, g + 8, g + 8}}, cCol[4] = {{2 * t, 2 * t + 1, 2 * t, 2 * t + 1}};
  unsigned a[4] = {{}}, b[2] = {{}};
  for (int i = 0; i < {1}; ++i) a[i / 2] |= unsigned(A[aRow[i] * {3} + aCol[i]]) << (16 * (i % 2));
  for (int i = 0; i < {2}; ++i) b[i / 2] |= unsigned(B[bRow[i] * 8 + g]) << (16 * (i % 2));
  float cf[4];
  unsigned ch[2] = {{}};
  for (int i = 0; i < 4; ++i) {{
    cf[i] = C[cRow[i] * 8 + cCol[i]];
    ch[i / 2] |= unsigned(Ch[cRow[i] * 8 + cCol[i]]) << (16 * (i % 2));
  }}
  {4} d[4];
  const {4}* cr = {5};
  asm volatile("mma.sync.aligned.m16n8k{3}.row.col.{6}.{7}.{7}.{6} {8}, {9}, {10}, {11};" : {12} : {13});
  for (int i = 0; i < 4; ++i) {{
    if ({14}) D[cRow[i] * 8 + cCol[i]] = reinterpret_cast<const float*>(d)[i];
    else Dh[cRow[i] * 8 + cCol[i]] = static_cast<unsigned short>(reinterpret_cast<const unsigned*>(d)[i / 2] >> (16 * (i % 2)));
  }}
}}
)",
                     name, aCount, bCount, c.k, c.f32Accumulator ? "float" : "unsigned", c.f32Accumulator ? "cf" : "ch", acc, c.input, d, a, b, cc,
                     outputs, inputs, c.f32Accumulator ? "true" : "false");
}

TEST_F(SimPtx, MmaSyncMatchesTheScalarProductElementByElement) {
  const std::vector<MmaCase> cases = {{16, "f16", true}, {16, "bf16", true}, {8, "f16", true},
                                      {8, "bf16", true}, {16, "f16", false}, {8, "f16", false}};
  std::string source;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    names.push_back(fmt::format("mma{}", i));
    source += mmaKernel(cases[i], names.back());
  }
  SimModule m(source, names);
  ASSERT_TRUE(m.ok()) << m.compileLog;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const MmaCase& c = cases[i];
    const bool bf16 = std::string(c.input) == "bf16";
    std::vector<float> a(16 * 16), b(16 * 8), cm(16 * 8), d(16 * 8, -999.0f);
    std::vector<unsigned short> ah(a.size()), bh(b.size()), chh(cm.size()), dh(d.size(), 0xffff);
    auto encode = [&](float v) { return bf16 ? test::bf16Bits(v) : test::halfBits(v); };
    for (int r = 0; r < 16; ++r) {
      for (int k = 0; k < c.k; ++k) a[static_cast<std::size_t>(r * c.k + k)] = static_cast<float>((r * 3 + k * 5) % 7 - 3);
    }
    for (int k = 0; k < c.k; ++k) {
      for (int n = 0; n < 8; ++n) b[static_cast<std::size_t>(k * 8 + n)] = static_cast<float>((k * 2 + n * 3) % 5 - 2);
    }
    for (int r = 0; r < 16; ++r) {
      for (int n = 0; n < 8; ++n) cm[static_cast<std::size_t>(r * 8 + n)] = static_cast<float>(r - n);
    }
    std::transform(a.begin(), a.end(), ah.begin(), encode);
    std::transform(b.begin(), b.end(), bh.begin(), encode);
    std::transform(cm.begin(), cm.end(), chh.begin(), test::halfBits);
    const unsigned short *pa = ah.data(), *pb = bh.data(), *pch = chh.data();
    const float* pc = cm.data();
    float* pd = d.data();
    unsigned short* pdh = dh.data();
    ASSERT_TRUE(m.launch(names[i], dim3(1), dim3(32), {&pa, &pb, &pc, &pch, &pd, &pdh}).ok) << names[i];
    for (int r = 0; r < 16; ++r) {
      for (int n = 0; n < 8; ++n) {
        float expected = cm[static_cast<std::size_t>(r * 8 + n)];
        for (int k = 0; k < c.k; ++k) expected += a[static_cast<std::size_t>(r * c.k + k)] * b[static_cast<std::size_t>(k * 8 + n)];
        const float got = c.f32Accumulator ? d[static_cast<std::size_t>(r * 8 + n)] : test::fromHalf(dh[static_cast<std::size_t>(r * 8 + n)]);
        EXPECT_EQ(got, expected) << "m16n8k" << c.k << " " << c.input << (c.f32Accumulator ? " f32" : " f16") << " D[" << r << "][" << n << "]";
      }
    }
  }
}

TEST_F(SimPtx, AlignedInstructionsNeedTheWholeWarp) {
  SimModule m(R"(extern "C" __global__ void k(float* out) {
  if (threadIdx.x >= 16) return;
  float d[4];
  unsigned z = 0;
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]) : "r"(z), "r"(z), "r"(z), "f"(0.0f), "f"(0.0f), "f"(0.0f), "f"(0.0f));
  out[threadIdx.x] = d[0];
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<float> out(32);
  float* p = out.data();
  const auto outcome = m.launch("k", dim3(1), dim3(32), {&p});
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("reached by only part of the warp"), std::string::npos) << outcome.error;
}

// Division and the float functions Triton's PTX uses (issue #64: div, rem, ex2, rsqrt, sqrt in its
// level-1 kernels), against the host's exact answers.
TEST_F(SimPtx, DivisionRemainderAndFloatFunctions) {
  SimModule m(R"(extern "C" __global__ void k(const int* in, int* q, float* f, double* d) {
  const int a = in[0], b = in[1];
  int r;
  unsigned u;
  long long w;
  asm("div.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); q[0] = r;
  asm("rem.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); q[1] = r;
  asm("div.u32 %0, %1, %2;" : "=r"(u) : "r"(0xfffffff0u), "r"(16u)); q[2] = static_cast<int>(u);
  asm("rem.u32 %0, %1, %2;" : "=r"(u) : "r"(1000u), "r"(7u)); q[3] = static_cast<int>(u);
  asm("div.s32 %0, %1, %2;" : "=r"(r) : "r"(INT_MIN), "r"(-1)); q[4] = r;
  asm("div.s64 %0, %1, %2;" : "=l"(w) : "l"(-9000000000ll), "l"(4ll)); q[5] = static_cast<int>(w);
  float x;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(x) : "f"(1.0f), "f"(3.0f)); f[0] = x;
  asm("div.full.f32 %0, %1, %2;" : "=f"(x) : "f"(10.0f), "f"(4.0f)); f[1] = x;
  asm("ex2.approx.f32 %0, %1;" : "=f"(x) : "f"(3.5f)); f[2] = x;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(x) : "f"(-2.0f)); f[3] = x;
  asm("lg2.approx.f32 %0, %1;" : "=f"(x) : "f"(8.0f)); f[4] = x;
  asm("sqrt.rn.f32 %0, %1;" : "=f"(x) : "f"(2.0f)); f[5] = x;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(x) : "f"(4.0f)); f[6] = x;
  asm("rcp.rn.f32 %0, %1;" : "=f"(x) : "f"(8.0f)); f[7] = x;
  double y;
  asm("div.rn.f64 %0, %1, %2;" : "=d"(y) : "d"(1.0), "d"(3.0)); d[0] = y;
  asm("sqrt.rn.f64 %0, %1;" : "=d"(y) : "d"(2.0)); d[1] = y;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog << m.unsupported;
  std::vector<int> in = {-17, 5}, q(6, 0);
  std::vector<float> f(8, -1.0f);
  std::vector<double> d(2, -1.0);
  int *pin = in.data(), *pq = q.data();
  float* pf = f.data();
  double* pd = d.data();
  const auto outcome = m.launch("k", dim3(1), dim3(1), {&pin, &pq, &pf, &pd});
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(q, (std::vector<int>{-3, -2, static_cast<int>(0xfffffff0u / 16u), 1000 % 7, INT_MIN, static_cast<int>(-9000000000ll / 4)}));
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  EXPECT_EQ(f[1], 2.5f);
  EXPECT_EQ(f[2], std::exp2f(3.5f));
  EXPECT_EQ(f[3], 0.25f);
  EXPECT_EQ(f[4], 3.0f);
  EXPECT_EQ(f[5], std::sqrt(2.0f));
  EXPECT_EQ(f[6], 0.5f);
  EXPECT_EQ(f[7], 0.125f);
  EXPECT_EQ(d[0], 1.0 / 3.0);
  EXPECT_EQ(d[1], std::sqrt(2.0));
}

TEST_F(SimPtx, AnIntegerDivisionByZeroStopsTheKernelNamingIt) {
  SimModule m(R"(extern "C" __global__ void k(const int* in, int* q) {
  int r;
  asm("div.s32 %0, %1, %2;" : "=r"(r) : "r"(in[0]), "r"(in[1]));
  q[0] = r;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog << m.unsupported;
  std::vector<int> in = {7, 0}, q(1, 0);
  int *pin = in.data(), *pq = q.data();
  const auto outcome = m.launch("k", dim3(1), dim3(1), {&pin, &pq});
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("integer division by zero"), std::string::npos) << outcome.error;
}

TEST_F(SimPtx, PtxTheSimulatorLacksIsUnsupportedNamingTheInstruction) {
  for (const auto& [body, named] : std::vector<std::pair<std::string, std::string>>{
           {R"(asm volatile("wgmma.fence.sync.aligned;");)", "wgmma.fence.sync.aligned"},
           {R"(unsigned r; asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(1)); y[0] = r;)", "bfind.u32"},
           {R"(unsigned r; asm("prmt.b32.f4e %0, %1, %2, 0x3210;" : "=r"(r) : "r"(1), "r"(2)); y[0] = r;)", "only the default mode"},
           {R"(float v; asm("ld.local.f32 %0, [%1];" : "=f"(v) : "l"(y)); y[0] = v;)", "the .local state space"},
           {R"(float v; asm("div.rz.f32 %0, %1, %2;" : "=f"(v) : "f"(y[0]), "f"(y[1])); y[0] = v;)", "directed rounding"},
       }) {
    SimModule m("extern \"C\" __global__ void k(float* y) {\n  " + body + "\n}\n", {"k"});
    EXPECT_FALSE(m.ok()) << body;
    EXPECT_NE(m.unsupported.find(named), std::string::npos) << m.unsupported;
    EXPECT_NE(m.unsupported.find("line 2"), std::string::npos) << m.unsupported;
  }
}

TEST(SimInlinePtx, RewritesPtxInFunctionsAndLeavesEverythingElseAsWritten) {
  const std::string source = R"src(asm(".globl marker");
#define LANE(r) asm volatile("mov.u32 %0, %%laneid;" \
                             : "=r"(r))
__device__ unsigned f() {
  unsigned r;
  LANE(r);
  asm volatile("mov.u32 %0,"
               " %%laneid;" : "=r"(r));
  // asm("not code");
  const char* s = "asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(r))";
  long x;
  asm volatile("syscall" : "=a"(x) : "a"(102L) : "rcx", "r11", "memory");
  return r + s[0] + x;
}
)src";
  const InlinePtxRewrite out = rewriteInlinePtx(source);
  EXPECT_TRUE(out.unsupported.empty()) << out.unsupported;
  EXPECT_EQ(out.rewritten, 2);  // the macro's statement and the one in the body
  EXPECT_EQ(std::count(out.source.begin(), out.source.end(), '\n'), std::count(source.begin(), source.end(), '\n'));  // lines kept
  EXPECT_NE(out.source.find(R"(asm(".globl marker");)"), std::string::npos);   // namespace scope: the library's
  EXPECT_NE(out.source.find(R"(asm volatile("syscall")"), std::string::npos);  // x86: the host compiler's
  EXPECT_NE(out.source.find(R"(// asm("not code");)"), std::string::npos);
  EXPECT_NE(out.source.find(R"(const char* s = "asm(\"mov.u32)"), std::string::npos);
  // The macro's rewritten body still continues onto its second line.
  const std::size_t define = out.source.find("#define LANE(r)");
  ASSERT_NE(define, std::string::npos);
  EXPECT_NE(out.source.substr(define, out.source.find('\n', define) - define).find("ptx_run"), std::string::npos);
  EXPECT_EQ(out.source[out.source.find('\n', define) - 1], '\\');
  EXPECT_FALSE(out.collectives);
}

// Whole kernel bodies (Triton's PTX) branch: loops, early exits, lanes that diverge and meet again at a
// warp collective, and register files far larger than an asm statement's.
TEST_F(SimPtx, BranchesLoopsEarlyExitsAndLargeRegisterFiles) {
  SimModule m(R"(extern "C" __global__ void k(const int* n, int* out) {
  int sum = 0;
  asm volatile("{ .reg .pred %%p<2>; .reg .b32 %%r<300>;\n"
      "mov.u32 %%r0, 0; mov.u32 %%r299, 0;\n"
      "LOOP:\n"
      "add.s32 %%r299, %%r299, %%r0; add.s32 %%r0, %%r0, 1;\n"
      "setp.lt.s32 %%p0, %%r0, %1;\n"
      "@%%p0 bra LOOP;\n"
      "mov.u32 %0, %%r299; }" : "=r"(sum) : "r"(n[0]));
  out[0] = sum;
  int odd = 0;
  asm volatile("{ .reg .pred %%p; .reg .b32 %%t, %%l;\n"
      "mov.u32 %%l, %%laneid; and.b32 %%t, %%l, 1; setp.eq.u32 %%p, %%t, 0;\n"
      "mov.u32 %0, 100;\n"
      "@%%p bra.uni EVEN;\n"
      "mov.u32 %0, %%l;\n"
      "EVEN:\n"
      "shfl.sync.bfly.b32 %0, %0, 1, 31, -1; }" : "=r"(odd));
  out[1 + threadIdx.x] = odd;
  if (threadIdx.x == 0) {
    asm volatile("{ st.global.u32 [%0], 7; ret; st.global.u32 [%0], 8; }" :: "l"(out + 33) : "memory");
  }
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog << m.unsupported;
  std::vector<int> n = {10}, out(34, -1);
  int *pn = n.data(), *po = out.data();
  const auto outcome = m.launch("k", dim3(1), dim3(32), {&pn, &po});
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(out[0], 45);
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(out[1 + lane], lane % 2 == 0 ? lane + 1 : 100) << lane;
  EXPECT_EQ(out[33], 7);
}

// mma.sync m16n8k8 with tf32 inputs, as Triton's tl.dot on float32 emits it on sm_80: the fragment
// layout of the PTX ISA's table, and inputs whose low 13 bits the tensor cores ignore.
TEST_F(SimPtx, Tf32MmaUsesTheIsaLayoutAndIgnoresTheLow13Bits) {
  SimModule m(R"(extern "C" __global__ void k(const float* A, const float* B, float* D) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const float a0 = A[g * 8 + t], a1 = A[(g + 8) * 8 + t], a2 = A[g * 8 + t + 4], a3 = A[(g + 8) * 8 + t + 4];
  const float b0 = B[t * 8 + g], b1 = B[(t + 4) * 8 + g];
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)),
                 "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
  D[g * 8 + 2 * t] = d0; D[g * 8 + 2 * t + 1] = d1; D[(g + 8) * 8 + 2 * t] = d2; D[(g + 8) * 8 + 2 * t + 1] = d3;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog << m.unsupported;
  std::vector<float> A(16 * 8), B(8 * 8), D(16 * 8, -1.0f);
  for (int i = 0; i < 16 * 8; ++i) A[i] = 1.0f + static_cast<float>(i % 7) / 8.0f + std::ldexp(1.0f, -20);  // bits below tf32's
  for (int i = 0; i < 8 * 8; ++i) B[i] = static_cast<float>(i % 5) - 2.0f + std::ldexp(1.0f, -19);
  auto tf32 = [](float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    u &= 0xffffe000u;
    std::memcpy(&x, &u, 4);
    return x;
  };
  float *pa = A.data(), *pb = B.data(), *pd = D.data();
  const auto outcome = m.launch("k", dim3(1), dim3(32), {&pa, &pb, &pd});
  ASSERT_TRUE(outcome.ok) << outcome.error;
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 8; ++c) {
      float want = 0;
      for (int k = 0; k < 8; ++k) want = std::fmaf(tf32(A[r * 8 + k]), tf32(B[k * 8 + c]), want);
      EXPECT_EQ(D[r * 8 + c], want) << r << "," << c;
    }
  }
}

// What Triton's reductions and NaN-aware comparisons emit: redux.sync over a warp, setp's unordered forms.
TEST_F(SimPtx, ReduxSyncAndUnorderedComparisons) {
  SimModule m(R"(extern "C" __global__ void k(const float* x, int* out) {
  int sum, mx;
  asm volatile("redux.sync.add.s32 %0, %1, -1;" : "=r"(sum) : "r"(static_cast<int>(threadIdx.x) - 10));
  asm volatile("redux.sync.max.u32 %0, %1, -1;" : "=r"(mx) : "r"(threadIdx.x * 3u));
  unsigned first;
  asm volatile("ld.global.b32 { %0 }, [ %1 + 0 ];" : "=r"(first) : "l"(x));  // one register in braces: a scalar
  if (threadIdx.x == 0) { out[0] = sum; out[1] = mx; out[6] = static_cast<int>(first); }
  if (threadIdx.x < 4) {
    int leu, nan, gt;
    asm volatile("{ .reg .pred %%p; setp.leu.f32 %%p, %1, 0f00000000; selp.s32 %0, 1, 0, %%p; }" : "=r"(leu) : "f"(x[threadIdx.x]));
    asm volatile("{ .reg .pred %%p; setp.nan.f32 %%p, %1, %1; selp.s32 %0, 1, 0, %%p; }" : "=r"(nan) : "f"(x[threadIdx.x]));
    asm volatile("{ .reg .pred %%p; setp.gt.f32 %%p, %1, 0f00000000; selp.s32 %0, 1, 0, %%p; }" : "=r"(gt) : "f"(x[threadIdx.x]));
    out[2 + threadIdx.x] = leu * 100 + nan * 10 + gt;
  }
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog << m.unsupported;
  std::vector<float> x = {-1.0f, 0.0f, 2.0f, std::nanf("")};
  std::vector<int> out(7, -1);
  float* px = x.data();
  int* po = out.data();
  const auto outcome = m.launch("k", dim3(1), dim3(32), {&px, &po});
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(out[0], 31 * 32 / 2 - 320);
  EXPECT_EQ(out[1], 93);
  EXPECT_EQ((std::vector<int>(out.begin() + 2, out.begin() + 6)), (std::vector<int>{100, 100, 1, 110}));
  EXPECT_EQ(out[6], static_cast<int>(0xbf800000u));  // -1.0f's bits
}

TEST_F(SimPtx, ABranchToAnUndefinedLabelIsNamed) {
  SimModule m(R"(extern "C" __global__ void k(int* out) { asm volatile("{ bra NOWHERE; }"); out[0] = 1; })", {"k"});
  EXPECT_FALSE(m.ok());
  EXPECT_NE(m.unsupported.find("undefined label"), std::string::npos) << m.unsupported << m.compileLog;
}
}  // namespace
}  // namespace cuset
