// The SFU's own math functions against the C library in double precision
// (an independent implementation), rounded to float: within one float ulp.
#include "sim/numerics/SfuMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>

using namespace spyre::sim;

namespace {

int64_t orderedBits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

/// Distance in float ulps (0 when both are the same NaN class or equal).
int64_t ulpDistance(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : 1 << 30;
  return std::llabs(orderedBits(a) - orderedBits(b));
}

void expectWithinUlp(const char *name, const std::function<float(float)> &ours,
                     const std::function<double(double)> &ref, float lo,
                     float hi, int steps, int64_t maxUlp = 1) {
  int64_t worst = 0;
  float worstX = 0;
  for (int i = 0; i <= steps; ++i) {
    float x = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(steps);
    auto expected = static_cast<float>(ref(x));
    int64_t d = ulpDistance(ours(x), expected);
    if (d > worst) {
      worst = d;
      worstX = x;
    }
  }
  EXPECT_LE(worst, maxUlp) << name << " worst at x=" << worstX;
}

double refGelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
// 0.5 x (1 + tanh u) written as x / (1 + e^(-2u)), which double evaluates
// without cancellation for large negative x.
double refGeluTanh(double x) {
  double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-2 * u));
}

} // namespace

TEST(SfuMath, ExpWithinOneUlp) {
  expectWithinUlp("exp", sfumath::exp, [](double x) { return std::exp(x); },
                  -100, 88, 200000);
  EXPECT_EQ(sfumath::exp(0), 1.0f);
  EXPECT_EQ(sfumath::exp(-200), 0.0f);
  EXPECT_TRUE(std::isinf(sfumath::exp(100)));
  EXPECT_TRUE(std::isnan(sfumath::exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST(SfuMath, TanhSigmoidSiluWithinOneUlp) {
  expectWithinUlp("tanh", sfumath::tanh, [](double x) { return std::tanh(x); },
                  -12, 12, 100000);
  expectWithinUlp("tanh small", sfumath::tanh,
                  [](double x) { return std::tanh(x); }, -1e-3f, 1e-3f, 10000);
  expectWithinUlp("sigmoid", sfumath::sigmoid,
                  [](double x) { return 1 / (1 + std::exp(-x)); }, -90, 90,
                  100000);
  expectWithinUlp("silu", sfumath::silu,
                  [](double x) { return x / (1 + std::exp(-x)); }, -90, 90,
                  100000);
}

TEST(SfuMath, ErfAndGeluWithinOneUlp) {
  expectWithinUlp("erf", sfumath::erf, [](double x) { return std::erf(x); }, -7,
                  7, 200000);
  expectWithinUlp("gelu", sfumath::gelu, refGelu, -10, 10, 100000);
  expectWithinUlp("gelu tanh", sfumath::geluTanh, refGeluTanh, -10, 10, 100000);
  EXPECT_EQ(sfumath::erf(0), 0.0f);
  EXPECT_EQ(sfumath::erf(10), 1.0f);
  EXPECT_EQ(sfumath::erf(-10), -1.0f);
}

TEST(SfuMath, RootsReciprocalsAndPowers) {
  expectWithinUlp("rsqrt", sfumath::rsqrt,
                  [](double x) { return 1 / std::sqrt(x); }, 1e-6f, 1e6f, 100000);
  expectWithinUlp("recip", sfumath::recip, [](double x) { return 1 / x; }, 1e-3f,
                  1e3f, 100000);
  expectWithinUlp("pow 0.5", [](float x) { return sfumath::pow(x, 0.5f); },
                  [](double x) { return std::pow(x, 0.5); }, 0, 1000, 100000);
  expectWithinUlp("pow 3", [](float x) { return sfumath::pow(x, 3.0f); },
                  [](double x) { return x * x * x; }, -100, 100, 100000);
  expectWithinUlp("pow -1.5", [](float x) { return sfumath::pow(x, -1.5f); },
                  [](double x) { return std::pow(x, -1.5); }, 0.01f, 100, 100000);
  EXPECT_EQ(sfumath::pow(-2, 2), 4.0f);
  EXPECT_TRUE(std::isnan(sfumath::pow(-2, 0.5f)));
  EXPECT_TRUE(std::isinf(sfumath::rsqrt(0)));
}

TEST(SfuMath, LogKernelMatchesLibrary) {
  for (double x : {1e-300, 1e-5, 0.3, 0.7071, 1.0, 1.5, 2.0, 10.0, 1e100}) {
    double ref = std::log(x);
    EXPECT_NEAR(sfumath::logD(x), ref, 4e-16 * std::max(1.0, std::fabs(ref))) << x;
  }
}
