#include "sim/numerics/SfuMath.h"

#include <array>
#include <cmath>
#include <limits>

namespace spyre::sim::sfumath {

namespace {

constexpr double kLn2 = 0.6931471805599453094172321214581766;
constexpr double kInvLn2 = 1.4426950408889634073599246810018921;
constexpr double kInvSqrtPi = 0.5641895835477562869480794515607726;
constexpr double kInvSqrt2 = 0.7071067811865475244008443621048490;
constexpr double kSqrt2OverPi = 0.7978845608028653558798921198687637;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// 1/n! for n = 0..13, computed at compile time (IEEE division, so the
/// same constants on every machine).
constexpr std::array<double, 14> kInvFactorial = [] {
  std::array<double, 14> c{};
  double f = 1;
  for (int n = 0; n < 14; ++n) {
    if (n > 0)
      f *= n;
    c[static_cast<size_t>(n)] = 1.0 / f;
  }
  return c;
}();

/// e^r - 1 for |r| <= ln2/2 by its Taylor polynomial to r^13 in Horner form:
/// the remainder is below 2^-55 relative, far under a float ulp.
double expm1Small(double r) {
  double p = kInvFactorial[13];
  for (int n = 12; n >= 1; --n)
    p = p * r + kInvFactorial[static_cast<size_t>(n)];
  return p * r;
}

} // namespace

double expD(double x) {
  if (std::isnan(x))
    return x;
  if (x > 709.8)
    return kInf;
  if (x < -745.2)
    return 0.0;
  // x = k ln2 + r with |r| <= ln2/2; ln2 split in two parts keeps r exact.
  double k = std::nearbyint(x * kInvLn2);
  constexpr double kLn2Hi = 0.693147180369123816490;     // 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10; // ln2 - kLn2Hi
  double r = (x - k * kLn2Hi) - k * kLn2Lo;
  return std::ldexp(1.0 + expm1Small(r), static_cast<int>(k)); // exact scaling
}

double expm1D(double x) {
  if (std::fabs(x) <= kLn2 / 2)
    return expm1Small(x);
  return expD(x) - 1.0;
}

double logD(double x) {
  if (std::isnan(x) || x < 0)
    return std::numeric_limits<double>::quiet_NaN();
  if (x == 0)
    return -kInf;
  if (std::isinf(x))
    return kInf;
  int e = 0;
  double m = std::frexp(x, &e); // exact: x = m 2^e, m in [0.5, 1)
  if (m < kInvSqrt2) {
    m *= 2;
    --e;
  }
  // log m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716.
  double s = (m - 1) / (m + 1), s2 = s * s, term = s, sum = 0;
  for (int n = 1; n <= 41; n += 2) {
    sum += term / n;
    term *= s2;
  }
  return 2 * sum + e * kLn2;
}

double erfD(double x) {
  if (std::isnan(x))
    return x;
  double ax = std::fabs(x), sign = x < 0 ? -1.0 : 1.0;
  if (ax < 2.5) {
    // Maclaurin series: erf x = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)).
    double x2 = ax * ax, term = ax, sum = ax;
    for (int n = 1; n < 80; ++n) {
      term *= -x2 / n;
      double add = term / (2 * n + 1);
      sum += add;
      if (std::fabs(add) < 1e-19 * std::fabs(sum))
        break;
    }
    return sign * 2 * kInvSqrtPi * sum;
  }
  if (ax > 6.5)
    return sign; // erfc < 1e-19
  // erfc by its continued fraction, evaluated bottom-up with a fixed depth:
  // erfc x = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))).
  double f = ax;
  for (int n = 120; n >= 1; --n)
    f = ax + (n / 2.0) / f;
  double erfc = expD(-ax * ax) * kInvSqrtPi / f;
  return sign * (1.0 - erfc);
}

float exp(float x) { return static_cast<float>(expD(x)); }

float tanh(float x) {
  double ax = std::fabs(static_cast<double>(x));
  if (std::isnan(x))
    return x;
  double t;
  if (ax > 20)
    t = 1.0;
  else {
    // tanh a = e / (e + 2) with e = expm1(2a): no cancellation near zero.
    double e = expm1D(2 * ax);
    t = e / (e + 2);
  }
  return static_cast<float>(x < 0 ? -t : t);
}

float sigmoid(float x) {
  return static_cast<float>(1.0 / (1.0 + expD(-static_cast<double>(x))));
}

float erf(float x) { return static_cast<float>(erfD(x)); }

float gelu(float x) {
  double d = x;
  return static_cast<float>(0.5 * d * (1.0 + erfD(d * kInvSqrt2)));
}

float geluTanh(float x) {
  // 0.5 x (1 + tanh u) = x / (1 + exp(-2u)): no cancellation for negative u.
  double d = x;
  double u = kSqrt2OverPi * (d + 0.044715 * d * d * d);
  return static_cast<float>(d / (1.0 + expD(-2.0 * u)));
}

float silu(float x) {
  double d = x;
  return static_cast<float>(d / (1.0 + expD(-d)));
}

float recip(float x) { return static_cast<float>(1.0 / static_cast<double>(x)); }

float rsqrt(float x) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
}

float sqrt(float x) { return std::sqrt(x); }

float pow(float x, float p) {
  double dx = x, dp = p;
  if (std::isnan(dx) || std::isnan(dp))
    return std::numeric_limits<float>::quiet_NaN();
  if (dp == std::nearbyint(dp) && std::fabs(dp) <= 64) {
    // Integral exponent: square-and-multiply in double (exact for small
    // powers of floats, correctly signed for negative bases).
    auto n = static_cast<int>(std::fabs(dp));
    double result = 1, base = dx;
    while (n > 0) {
      if (n & 1)
        result *= base;
      base *= base;
      n >>= 1;
    }
    return static_cast<float>(dp < 0 ? 1.0 / result : result);
  }
  if (dx < 0)
    return std::numeric_limits<float>::quiet_NaN();
  if (dx == 0)
    return dp > 0 ? 0.0f : std::numeric_limits<float>::infinity();
  return static_cast<float>(expD(dp * logD(dx)));
}

} // namespace spyre::sim::sfumath
