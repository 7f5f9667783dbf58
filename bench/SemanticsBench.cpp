// Throughput of the functional semantics: matrix-multiply MACs per second
// and SFU elements per second, on one LX-sized buffer. Run by hand:
//   build/bench/bench_semantics
#include "isa/InstrTable.h"
#include "numerics/Dlf16.h"
#include "sim/core/Semantics.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

using namespace spyre;

namespace {

constexpr int64_t kLxSticks = 16384; // 2 MiB

using isa::Field;
using isa::makeInstr;
using isa::Opcode;

/// An LX of DL16 values in [-2, 2) (FP32 operands read them as whatever
/// finite floats the bytes make; only the speed matters here).
std::vector<uint8_t> randomLx() {
  std::vector<uint8_t> lx(kLxSticks * isa::kStickBytes);
  std::mt19937 gen(1);
  for (size_t i = 0; i < lx.size(); i += 2) {
    float v = static_cast<float>(gen() % 4096) / 1024.0f - 2.0f;
    uint16_t c = dlf16::fromFloat(v);
    std::memcpy(&lx[i], &c, 2);
  }
  return lx;
}

void bmMatmul(benchmark::State &state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t out = state.range(3);
  std::vector<uint8_t> lx = randomLx();
  const int64_t a = 0, b = m * k / 64, c = b + k * n / 64;
  isa::Instr mm = makeInstr(Opcode::Mm, {{Field::C, c},
                                   {Field::A, a},
                                   {Field::B, b},
                                   {Field::M, m},
                                   {Field::K, k},
                                   {Field::N, n},
                                   {Field::Out, out}});
  for (auto _ : state) {
    sim::executeCompute(mm, lx.data());
    benchmark::ClobberMemory();
  }
  state.counters["MACs"] = benchmark::Counter(
      static_cast<double>(m * k * n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void bmSfu(benchmark::State &state, Opcode mnemonic, bool binary) {
  const int64_t m = 64, n = 16, fmt = state.range(0);
  const int64_t lanes = fmt == 1 ? 32 : 64;
  std::vector<uint8_t> lx = randomLx();
  isa::Instr in =
      binary
          ? makeInstr(mnemonic, {{Field::Dst, 4096},
                                 {Field::Src1, 0},
                                 {Field::Src2, 2048},
                                 {Field::N, n},
                                 {Field::M, m},
                                 {Field::Fmt, fmt}})
          : makeInstr(
                mnemonic,
                {{Field::Dst, 4096}, {Field::Src, 0}, {Field::N, n}, {Field::M, m}, {Field::Fmt, fmt}});
  for (auto _ : state) {
    sim::executeCompute(in, lx.data());
    benchmark::ClobberMemory();
  }
  state.counters["elements"] =
      benchmark::Counter(static_cast<double>(m * n * lanes) *
                             static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void bmExp(benchmark::State &state) { bmSfu(state, Opcode::Exp, false); }
void bmAdd(benchmark::State &state) { bmSfu(state, Opcode::Add, true); }

} // namespace

// Arguments: m, k, n, out (0 = dl16, 1 = f32).
BENCHMARK(bmMatmul)
    ->Args({64, 512, 512, 1})
    ->Args({64, 512, 512, 0})
    ->Args({256, 1024, 256, 1})
    ->Args({7, 128, 192, 1})
    ->Unit(benchmark::kMicrosecond);
// Argument: fmt (0 = dl16, 1 = f32); 64 rows of 16 sticks.
BENCHMARK(bmExp)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(bmAdd)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
