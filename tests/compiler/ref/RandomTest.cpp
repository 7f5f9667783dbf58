// Deterministic random inputs: PCG32 reproduces the published reference
// sequence, and each input's data depends only on the seed and its name.
#include "compiler/ref/Random.h"

#include "numerics/Half.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

namespace spyre::compiler::ref {
namespace {

// pcg32-demo of pcg-c-basic (pcg-random.org): pcg32_srandom_r(&rng, 42, 54)
// then six pcg32_random_r calls.
TEST(Pcg32, MatchesTheReferenceImplementation) {
  Pcg32 rng(42, 54);
  const uint32_t expected[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                               0x83d2f293, 0xbfa4784b, 0xcbed606e};
  for (uint32_t e : expected)
    EXPECT_EQ(rng.next(), e);
}

TEST(Pcg32, DoublesAreInTheUnitInterval) {
  Pcg32 rng(1, 2);
  double lo = 1, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    double d = rng.nextDouble();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_LT(lo, 0.001);
  EXPECT_GT(hi, 0.999);
}

TEST(RandomInput, IsDeterministicPerSeedAndName) {
  TensorType t{ElementType::F32, {7, 77}};
  NpyArray a = randomInput(t, 5, "x");
  EXPECT_EQ(a.shape, t.shape);
  EXPECT_EQ(a.dtype, NpyDtype::F32);
  EXPECT_EQ(a.data, randomInput(t, 5, "x").data);
  EXPECT_NE(a.data, randomInput(t, 6, "x").data);
  EXPECT_NE(a.data, randomInput(t, 5, "y").data);
  std::vector<float> v = npyF32Values(a, "x");
  for (float f : v) {
    EXPECT_GE(f, -1.0f);
    EXPECT_LE(f, 1.0f);
  }
}

TEST(RandomInput, FillsEveryElementType) {
  NpyArray h = randomInput({ElementType::F16, {100}}, 1, "h");
  EXPECT_EQ(h.dtype, NpyDtype::F16);
  ASSERT_EQ(h.data.size(), 200u);
  for (size_t i = 0; i < 100; ++i) {
    uint16_t bits;
    std::memcpy(&bits, h.data.data() + 2 * i, 2);
    float f = half::halfToFloat(bits);
    EXPECT_GE(f, -1.0f);
    EXPECT_LE(f, 1.0f);
  }
  NpyArray b = randomInput({ElementType::I8, {256}}, 1, "b");
  EXPECT_EQ(b.data.size(), 256u);
  NpyArray i = randomInput({ElementType::I32, {50}}, 1, "i");
  for (size_t k = 0; k < 50; ++k) {
    int32_t v;
    std::memcpy(&v, i.data.data() + 4 * k, 4);
    EXPECT_GE(v, -1000);
    EXPECT_LE(v, 1000);
  }
  // Ids of a table of 7 rows: each of 0..6 drawn, nothing else.
  NpyArray ids = randomInput({ElementType::I32, {200}}, 1, "ids", 7);
  std::set<int32_t> seen;
  for (size_t k = 0; k < 200; ++k) {
    int32_t v;
    std::memcpy(&v, ids.data.data() + 4 * k, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1, 2, 3, 4, 5, 6}));
}

} // namespace
} // namespace spyre::compiler::ref
