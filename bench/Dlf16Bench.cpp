// Throughput of the bulk DL16 conversions the simulator uses to move tensors
// between fp32 and device memory, in elements per second. The inputs mix
// ordinary values with the rare cases (zeros, tiny values, overflow, NaN) so
// that data-dependent branches, if any crept in, would show up.
#include "numerics/Dlf16.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace spyre;

std::vector<float> makeInputs(size_t n) {
  std::mt19937 gen(42);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = normal(gen);
  // About one in 64 elements is an edge case.
  const float edges[] = {0.0f,
                         -0.0f,
                         1e-12f,
                         1e10f,
                         -1e10f,
                         std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity()};
  for (size_t i = 0; i < n; i += 64)
    v[i] = edges[(i / 64) % std::size(edges)];
  return v;
}

void encodeArray(benchmark::State &state, dlf16::Overflow mode) {
  auto n = static_cast<size_t>(state.range(0));
  std::vector<float> in = makeInputs(n);
  std::vector<uint16_t> out(n);
  for (auto _ : state) {
    dlf16::fromFloatArray(in.data(), out.data(), n, mode);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0) * 6);
}

void BM_FromFloatArray(benchmark::State &state) {
  encodeArray(state, dlf16::Overflow::ToSpecial);
}

void BM_FromFloatArraySaturate(benchmark::State &state) {
  encodeArray(state, dlf16::Overflow::Saturate);
}

void BM_ToFloatArray(benchmark::State &state) {
  auto n = static_cast<size_t>(state.range(0));
  std::vector<uint16_t> in(n);
  dlf16::fromFloatArray(makeInputs(n).data(), in.data(), n);
  std::vector<float> out(n);
  for (auto _ : state) {
    dlf16::toFloatArray(in.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0) * 6);
}

// The scalar path with flags, for comparison: what a per-element caller pays.
void BM_FromFloatScalarWithFlags(benchmark::State &state) {
  auto n = static_cast<size_t>(state.range(0));
  std::vector<float> in = makeInputs(n);
  std::vector<uint16_t> out(n);
  for (auto _ : state) {
    dlf16::Flags flags;
    for (size_t i = 0; i < n; ++i)
      out[i] = dlf16::fromFloat(in[i], dlf16::Overflow::ToSpecial, &flags);
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(flags);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}

// 4 Ki elements: one 64-stick tile, in L1; 1 Mi: a large tensor, out of L2.
BENCHMARK(BM_FromFloatArray)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_FromFloatArraySaturate)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_ToFloatArray)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_FromFloatScalarWithFlags)->Arg(4096)->Arg(1 << 20);

} // namespace
