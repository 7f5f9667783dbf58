// The SFU's elementwise functions, computed the same way on every machine.
//
// The C library's transcendental functions pick code paths by CPU (e.g. FMA
// variants selected at load time), so their last bit may differ between
// machines. These are written with double-precision +, -, *, / and sqrt only,
// which IEEE 754 specifies exactly, and rounded once to float at the end: the
// results are bit-identical everywhere and within about one float ulp of the
// true value. The SFU computes in FP32 (DESIGN section 2); the caller rounds
// to DL16 when the destination format is DL16.
#pragma once

namespace spyre::sim::sfumath {

float exp(float x);
float tanh(float x);
float sigmoid(float x);
float erf(float x);
/// GELU, exact form: 0.5 x (1 + erf(x / sqrt 2)).
float gelu(float x);
/// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
float geluTanh(float x);
/// SiLU: x * sigmoid(x).
float silu(float x);
float recip(float x);
float rsqrt(float x);
float sqrt(float x);
/// x to the power p; for integral p by repeated squaring, otherwise
/// exp(p log x) (NaN for negative x).
float pow(float x, float p);

/// Double-precision kernels behind the float functions (exposed for tests).
double expD(double x);
double expm1D(double x);
double logD(double x);
double erfD(double x);

} // namespace spyre::sim::sfumath
