// WMMA on the simulator (evaluator/sim/runtime/include/mma.h) against a scalar reference, for every
// fragment shape and type of sm_80/sm_90, both operand layouts, both store layouts and padded ldm.
// Inputs are small integers, so every sum is exact whatever the accumulation order; tf32's
// truncation is checked with a value it cannot hold.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>

#include "sim_test_util.hpp"

namespace cuset {
namespace {

using test::SimModule;

class SimWmma : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cuset_sim::start_host_threads(2); }
};

using test::bf16Bits;
using test::fromHalf;
using test::halfBits;

struct Case {
  std::string in, acc;  // device type names
  int m, n, k;
  bool aRow, bRow, storeRow;
};

struct Strides {
  int lda, ldb, ldd;
};
Strides stridesOf(const Case& c) {
  const int pad = 8;  // ldm larger than the tile
  return {(c.aRow ? c.k : c.m) + pad, (c.bRow ? c.n : c.k) + pad, (c.storeRow ? c.n : c.m) + pad};
}

// Kernel `name`: one warp computes D = 2 * (A * B + C); the factor 2 goes through x[i] / num_elements.
std::string kernel(const Case& c, const std::string& name) {
  const auto [lda, ldb, ldd] = stridesOf(c);
  const std::string fragIn = c.in == "float" ? "wmma::precision::tf32" : c.in;
  return fmt::format(R"(
extern "C" __global__ void {12}(const {0}* a, const {0}* b, const {1}* c, {1}* d) {{
  wmma::fragment<wmma::matrix_a, {2}, {3}, {4}, {5}, wmma::{6}> fa;
  wmma::fragment<wmma::matrix_b, {2}, {3}, {4}, {5}, wmma::{7}> fb;
  wmma::fragment<wmma::accumulator, {2}, {3}, {4}, {1}> acc;
  wmma::load_matrix_sync(fa, a, {8});
  wmma::load_matrix_sync(fb, b, {9});
  wmma::load_matrix_sync(acc, c, {3}, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = acc.x[i] + acc.x[i];
  wmma::store_matrix_sync(d, acc, {10}, wmma::{11});
}}
)",
                     c.in, c.acc, c.m, c.n, c.k, fragIn, c.aRow ? "row_major" : "col_major", c.bRow ? "row_major" : "col_major", lda, ldb, ldd,
                     c.storeRow ? "mem_row_major" : "mem_col_major", name);
}

// Values as doubles; encode() turns them into the device type's bytes.
std::vector<std::byte> encode(const std::string& type, const std::vector<double>& v) {
  std::vector<std::byte> out;
  auto put = [&](const auto& x) {
    const auto* p = reinterpret_cast<const std::byte*>(&x);
    out.insert(out.end(), p, p + sizeof x);
  };
  for (double x : v) {
    if (type == "half")
      put(halfBits(static_cast<float>(x)));
    else if (type == "__nv_bfloat16")
      put(bf16Bits(static_cast<float>(x)));
    else if (type == "float")
      put(static_cast<float>(x));
    else if (type == "double")
      put(x);
    else if (type == "int")
      put(static_cast<int>(x));
    else if (type == "signed char")
      put(static_cast<signed char>(x));
    else if (type == "unsigned char")
      put(static_cast<unsigned char>(x));
  }
  return out;
}

double decode(const std::string& type, const std::vector<std::byte>& bytes, std::size_t i) {
  auto get = [&](auto x) {
    std::memcpy(&x, bytes.data() + i * sizeof x, sizeof x);
    return x;
  };
  if (type == "half") return fromHalf(get(std::uint16_t{}));
  if (type == "float") return get(0.0f);
  if (type == "double") return get(0.0);
  return get(0);  // int
}

void expectProduct(const SimModule& mod, const std::string& name, const Case& c) {
  SCOPED_TRACE(fmt::format("{} -> {}, m{}n{}k{}, A {}, B {}, store {}", c.in, c.acc, c.m, c.n, c.k, c.aRow ? "row" : "col", c.bRow ? "row" : "col",
                           c.storeRow ? "row" : "col"));
  const auto [lda, ldb, ldd] = stridesOf(c);
  const bool unsignedIn = c.in == "unsigned char", wide = c.in == "signed char" || unsignedIn;
  auto value = [&](int i, int j, int salt) { return static_cast<double>(((i * 7 + j * 3 + salt) % 7) - (unsignedIn ? 0 : 3)) * (wide ? 17 : 1); };
  std::vector<double> a(static_cast<std::size_t>(lda) * (c.aRow ? c.m : c.k), 0.0), b(static_cast<std::size_t>(ldb) * (c.bRow ? c.k : c.n), 0.0);
  std::vector<double> cm(static_cast<std::size_t>(c.m) * c.n);
  for (int i = 0; i < c.m; ++i) {
    for (int kk = 0; kk < c.k; ++kk) a[c.aRow ? i * lda + kk : kk * lda + i] = value(i, kk, 1);
  }
  for (int kk = 0; kk < c.k; ++kk) {
    for (int j = 0; j < c.n; ++j) b[c.bRow ? kk * ldb + j : j * ldb + kk] = value(kk, j, 2);
  }
  for (int i = 0; i < c.m * c.n; ++i) cm[static_cast<std::size_t>(i)] = (i % 5) - 2;
  std::vector<std::byte> A = encode(c.in, a), B = encode(c.in, b), C = encode(c.acc, cm);
  const std::size_t accBytes = c.acc == "half" ? 2 : c.acc == "double" ? 8 : 4;
  std::vector<std::byte> D(accBytes * static_cast<std::size_t>(ldd) * (c.storeRow ? c.m : c.n));

  void *pa = A.data(), *pb = B.data(), *pc = C.data(), *pd = D.data();
  const auto outcome = mod.launch(name, dim3(1), dim3(32), {&pa, &pb, &pc, &pd});
  ASSERT_TRUE(outcome.ok) << outcome.error;
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < c.n; ++j) {
      double want = cm[static_cast<std::size_t>(i * c.n + j)];
      for (int kk = 0; kk < c.k; ++kk) want += a[c.aRow ? i * lda + kk : kk * lda + i] * b[c.bRow ? kk * ldb + j : j * ldb + kk];
      const std::size_t at = static_cast<std::size_t>(c.storeRow ? i * ldd + j : j * ldd + i);
      ASSERT_EQ(decode(c.acc, D, at), 2 * want) << "element (" << i << ", " << j << ")";
    }
  }
}

TEST_F(SimWmma, EveryShapeAndTypeMatchesTheScalarProduct) {
  std::vector<Case> cases;
  for (const auto& [in, acc] : std::vector<std::pair<std::string, std::string>>{
           {"half", "float"}, {"half", "half"}, {"__nv_bfloat16", "float"}, {"signed char", "int"}, {"unsigned char", "int"}}) {
    for (const auto& [m, n, k] : std::vector<std::tuple<int, int, int>>{{16, 16, 16}, {32, 8, 16}, {8, 32, 16}}) {
      cases.push_back({in, acc, m, n, k, true, true, true});
    }
  }
  cases.push_back({"float", "float", 16, 16, 8, true, true, true});  // tf32
  cases.push_back({"double", "double", 8, 8, 4, true, true, true});
  // Every layout combination, on one shape of each family.
  for (const auto& [in, acc, m, n, k] : std::vector<std::tuple<std::string, std::string, int, int, int>>{
           {"half", "float", 32, 8, 16}, {"float", "float", 16, 16, 8}, {"double", "double", 8, 8, 4}}) {
    for (int layouts = 1; layouts < 8; ++layouts) cases.push_back({in, acc, m, n, k, (layouts & 1) != 0, (layouts & 2) != 0, (layouts & 4) != 0});
  }
  // One library with a kernel per case: one host build instead of one per case.
  std::string source = "#include <mma.h>\nusing namespace nvcuda;\n";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    names.push_back("k" + std::to_string(i));
    source += kernel(cases[i], names.back());
  }
  const SimModule mod(source, names);
  ASSERT_TRUE(mod.ok()) << mod.compileLog;
  for (std::size_t i = 0; i < cases.size(); ++i) expectProduct(mod, names[i], cases[i]);
}

// tf32 operands lose the low 13 mantissa bits on a tensor core: 1 + 2^-12 is 1 there.
TEST_F(SimWmma, Tf32OperandsAreTruncated) {
  SimModule m(R"(#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void k(const float* a, const float* b, float* d, float* rounded) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
  if (threadIdx.x == 0) rounded[0] = wmma::__float_to_tf32(1.0f + 3.0f / 2048.0f);
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<float> a(16 * 8, 0.0f), b(8 * 16, 0.0f), d(16 * 16, -1.0f), rounded(1);
  a[0] = 1.0f + 1.0f / 4096.0f;  // row 0, k 0
  b[0] = 1.0f;                   // k 0, column 0
  float *pa = a.data(), *pb = b.data(), *pd = d.data(), *pr = rounded.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(32), {&pa, &pb, &pd, &pr}).ok);
  EXPECT_EQ(d[0], 1.0f);
  EXPECT_EQ(d[1], 0.0f);
  EXPECT_EQ(rounded[0], 1.0f + 1.0f / 512.0f);  // 1.5 units of the 10th mantissa bit: to nearest, ties away
}

// Like every *_sync collective, a WMMA operation needs the whole warp: half of it skipping one is a
// runtime error naming the operation, not a silent result.
TEST_F(SimWmma, APartOfTheWarpAloneIsARuntimeError) {
  SimModule m(R"(#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void k(const half* a, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  if (threadIdx.x < 16) wmma::load_matrix_sync(fa, a, 16);
  d[threadIdx.x] = 1.0f;
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<std::uint16_t> a(256, 0);
  std::vector<float> d(32);
  void *pa = a.data(), *pd = d.data();
  const auto outcome = m.launch("k", dim3(1), dim3(32), {&pa, &pd});
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("wmma::load_matrix_sync reached by only part of the warp"), std::string::npos) << outcome.error;
}

// mma_sync hands a computed product to the next lane only when that lane's fragments are bitwise the
// same: lanes that (non-portably) hold different elements each get their own product.
TEST_F(SimWmma, LanesWithDifferentFragmentsGetTheirOwnProducts) {
  SimModule m(R"(#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void k(float* out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(a, __float2half(1.0f));
  wmma::fill_fragment(b, __float2half(1.0f));
  wmma::fill_fragment(acc, 0.0f);
  if (threadIdx.x % 2) a.x[0] = __float2half(static_cast<float>(threadIdx.x));  // row 0, k 0
  for (int step = 0; step < 2; ++step) wmma::mma_sync(acc, a, b, acc);
  out[threadIdx.x] = acc.x[0];
  out[32 + threadIdx.x] = acc.x[16];  // row 1: the same in every lane
})",
              {"k"});
  ASSERT_TRUE(m.ok()) << m.compileLog;
  std::vector<float> out(64);
  float* p = out.data();
  ASSERT_TRUE(m.launch("k", dim3(1), dim3(32), {&p}).ok);
  for (int lane = 0; lane < 32; ++lane) {
    const float a00 = lane % 2 ? static_cast<float>(lane) : 1.0f;
    EXPECT_EQ(out[static_cast<std::size_t>(lane)], 2.0f * (a00 + 15.0f)) << lane;
    EXPECT_EQ(out[32 + static_cast<std::size_t>(lane)], 32.0f) << lane;
  }
}

}  // namespace
}  // namespace cuset
