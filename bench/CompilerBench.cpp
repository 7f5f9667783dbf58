// Compiler quality: the simulated cycles of compiled programs against the
// roofline bound of the same config, and -O2 against -O0, for the shapes
// issue 4 names (large and LLM-shaped matmuls, a small output over a long K
// that -O2 splits across cores, batched matmuls over N, softmax and layer
// norm on [8192, 4096]); and the compile time of a
// transformer encoder layer (d = 768, 12 heads, sequence 512) and of chains
// of 1,000 to 20,000 relu ops (BM_CompileReluChain); and IBM's two
// ablations as pairs of the naive plan against ours (BM_Ablation*, counters
// naive_cycles, ours_cycles, gain_pct: batched matmul [B, 512, 4096] x
// [4096, N], and softmax on one core with its reductions through device
// memory against in LX).
//
// Each case compiles a one-op graph at -O0 and -O2 and simulates both timing
// only (the cycles do not depend on the data). The counters are the figures
// docs/compiler-quality.md tabulates (scripts/bench_table.py turns this
// program's JSON output into that table):
//   o0_cycles, o2_cycles   simulated cycles at each level
//   bound_cycles           max(compute bound, memory bound), below
//   o2_pct_of_bound        bound / o2 cycles, in percent
//   speedup                o0 / o2 cycles
//   compute_bound          1 when the compute bound is the larger
//   o2_program_kb, o2_cores, o2_compile_ms
// The bound:
//   compute: MACs / (cores x corelets x PT MACs per cycle x pass
//     efficiency), the efficiency at the best case of one PT instruction
//     streaming all M rows of a product (min(1, sqrt(passes / full-rate
//     passes)), sim/timing/CostModel.h);
//   memory: every operand read once and the result written once, in whole
//     sticks, at the sustained bandwidths in the memory channel's cost
//     model (memoryCycles below).
// Simulation time dominates: run with --benchmark_filter to pick cases.
#include "compiler/driver/Compile.h"
#include "compiler/ir/Graph.h"
#include "compiler/ir/Parser.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/core/Machine.h"
#include "support/Diagnostic.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace spyre;
using compiler::Graph;

std::string dims(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::unique_ptr<Graph> parse(const std::string &text) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> g = compiler::parseGraph(text, "bench.ir", diags);
  SPYRE_ASSERT(g, diags.str());
  return g;
}

/// Bytes of a DL16 tensor in whole sticks (the last dim padded to 64).
double stickBytes(const std::vector<int64_t> &shape) {
  const int64_t lanes = isa::kStickBytes / 2;
  double rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    rows *= static_cast<double>(shape[i]);
  double sticks = std::ceil(static_cast<double>(shape.back()) /
                            static_cast<double>(lanes));
  return rows * sticks * isa::kStickBytes;
}

struct Bound {
  double compute = 0; ///< cycles
  double memory = 0;  ///< cycles
  double cycles() const { return std::max(compute, memory); }
};

/// The memory bound of reading `read` bytes and writing `written` bytes
/// once, in the channel's own cost model (sim/timing/MemoryChannel.h, IBM's
/// (R + W) / S + alpha min(R, W)): S the sustained one-way rate, and each
/// byte paired with traffic the other way costs alpha = 2 / M - 2 / S more,
/// M the sustained mixed rate.
double memoryCycles(double read, double written) {
  const hw::HwConfig &c = hw::builtinConfig();
  const double s = c.memory.sustainedReadGBps / c.chip.clockGhz;
  const double m = c.memory.sustainedMixedGBps / c.chip.clockGhz;
  return (read + written) / s + (2 / m - 2 / s) * std::min(read, written);
}

/// The bound of `products` matmuls of [m, k] x [k, n].
Bound matmulBound(double products, int64_t m, int64_t k, int64_t n,
                  double read, double written) {
  const hw::HwConfig &c = hw::builtinConfig();
  const double passes = std::ceil(static_cast<double>(m) / c.pt.passRows);
  const double eff = std::min(1.0, std::sqrt(passes / c.pt.fullRatePasses));
  const double macsPerCycle = static_cast<double>(c.chip.cores) *
                              c.chip.coreletsPerCore * c.ptMacsPerCycle() *
                              eff;
  Bound b;
  b.compute = products * static_cast<double>(m) * static_cast<double>(k) *
              static_cast<double>(n) / macsPerCycle;
  b.memory = memoryCycles(read, written);
  return b;
}

struct Level {
  uint64_t cycles = 0;
  double compileMs = 0;
  size_t programBytes = 0;
  int cores = 0;
};

/// Cores that move or compute data (every core has barrier streams).
int workingCores(const isa::Program &program) {
  std::vector<bool> used;
  for (const isa::Stream &stream : program.streams)
    for (const isa::Instr &instr : stream.code)
      if (instr.opcode == isa::Opcode::Ld) {
        used.resize(std::max(used.size(), static_cast<size_t>(stream.core) + 1));
        used[static_cast<size_t>(stream.core)] = true;
      }
  return static_cast<int>(std::count(used.begin(), used.end(), true));
}

Level compileAndSimulate(const Graph &graph, int level,
                         const hw::HwConfig &config = hw::builtinConfig()) {
  DiagnosticEngine diags;
  compiler::CompileOptions options;
  options.optLevel = level;
  auto start = std::chrono::steady_clock::now();
  std::optional<compiler::CompileResult> r =
      compiler::compileGraph(graph, config, options, diags);
  auto end = std::chrono::steady_clock::now();
  SPYRE_ASSERT(r, diags.str());
  Level out;
  out.compileMs =
      std::chrono::duration<double, std::milli>(end - start).count();
  out.programBytes = isa::writeProgram(r->program).size();
  out.cores = workingCores(r->program);
  sim::SimOptions so;
  so.numerics = false;
  so.checks = false;
  sim::Machine m(config, r->program, so);
  m.run();
  out.cycles = m.totalCycles();
  return out;
}

/// IBM's ablation pairs (docs/compiler-quality.md, "IBM's ablations"): the
/// naive plan (`naive` at -O0) against ours (`ours` at -O2) on `config`;
/// the counters are the two cycle counts and their ratio.
void runAblation(benchmark::State &state, const std::string &naiveIr,
                 const std::string &oursIr, const hw::HwConfig &config) {
  std::unique_ptr<Graph> naive = parse(naiveIr), ours = parse(oursIr);
  Level n, o;
  for (auto _ : state) {
    n = compileAndSimulate(*naive, 0, config);
    o = compileAndSimulate(*ours, 2, config);
  }
  state.counters["naive_cycles"] = static_cast<double>(n.cycles);
  state.counters["ours_cycles"] = static_cast<double>(o.cycles);
  state.counters["gain_pct"] =
      100.0 * (static_cast<double>(n.cycles) / static_cast<double>(o.cycles) -
               1.0);
}

void runCase(benchmark::State &state, const std::string &ir, Bound bound) {
  std::unique_ptr<Graph> g = parse(ir);
  Level o0, o2;
  for (auto _ : state) {
    o0 = compileAndSimulate(*g, 0);
    o2 = compileAndSimulate(*g, 2);
  }
  auto set = [&](const char *name, double v) { state.counters[name] = v; };
  set("o0_cycles", static_cast<double>(o0.cycles));
  set("o2_cycles", static_cast<double>(o2.cycles));
  set("bound_cycles", bound.cycles());
  set("compute_bound", bound.compute >= bound.memory ? 1 : 0);
  set("o2_pct_of_bound", 100.0 * bound.cycles() / static_cast<double>(o2.cycles));
  set("speedup", static_cast<double>(o0.cycles) / static_cast<double>(o2.cycles));
  set("o2_program_kb", static_cast<double>(o2.programBytes) / 1024.0);
  set("o2_cores", o2.cores);
  set("o2_compile_ms", o2.compileMs);
}

/// [m, k] x [k, n], or a batch of them with per-batch B.
void BM_Matmul(benchmark::State &state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  std::string ir = "graph @mm {\n  input %a : f32" + dims({m, k}) +
                   "\n  input %b : f32" + dims({k, n}) +
                   "\n  %y = matmul @mm(%a, %b) : f32" + dims({m, n}) +
                   "\n  return %y\n}\n";
  runCase(state, ir,
          matmulBound(1, m, k, n, stickBytes({m, k}) + stickBytes({k, n}),
                      stickBytes({m, n})));
}

/// [8, 512, 4096] x [4096, n], B shared by the batch.
void BM_BatchedMatmul(benchmark::State &state) {
  const int64_t b = 8, m = 512, k = 4096, n = state.range(0);
  std::string ir = "graph @bmm {\n  input %a : f32" + dims({b, m, k}) +
                   "\n  input %b : f32" + dims({k, n}) +
                   "\n  %y = matmul @bmm(%a, %b) : f32" + dims({b, m, n}) +
                   "\n  return %y\n}\n";
  // One B for all batches: the bound streams the batch's rows together.
  runCase(state, ir,
          matmulBound(1, b * m, k, n, stickBytes({b, m, k}) + stickBytes({k, n}),
                      stickBytes({b, m, n})));
}

void BM_Softmax(benchmark::State &state) {
  const int64_t m = 8192, n = 4096;
  std::string ir = "graph @sm {\n  input %x : f32" + dims({m, n}) +
                   "\n  %y = softmax @sm(%x) {axis = -1} : f32" + dims({m, n}) +
                   "\n  return %y\n}\n";
  Bound b;
  b.memory = memoryCycles(stickBytes({m, n}), stickBytes({m, n}));
  runCase(state, ir, b);
}

void BM_LayerNorm(benchmark::State &state) {
  const int64_t m = 8192, n = 4096;
  std::string ir = "graph @ln {\n  input %x : f32" + dims({m, n}) +
                   "\n  input %w : f32" + dims({n}) +
                   "\n  input %b : f32" + dims({n}) +
                   "\n  %y = layernorm @ln(%x, %w, %b) {axis = -1, epsilon = "
                   "1e-05} : f32" +
                   dims({m, n}) + "\n  return %y\n}\n";
  Bound b;
  b.memory = memoryCycles(stickBytes({m, n}) + 2 * stickBytes({n}),
                          stickBytes({m, n}));
  runCase(state, ir, b);
}

/// IBM's batched-matmul ablation, [B, 512, 4096] x [4096, N]: the naive
/// plan (-O0: every core loads its operands over all of K, single-buffered)
/// against -O2's work division and scratchpad planning.
void BM_AblationBatchedMatmul(benchmark::State &state) {
  const int64_t b = state.range(0), m = 512, k = 4096, n = state.range(1);
  std::string ir = "graph @bmm {\n  input %a : f32" + dims({b, m, k}) +
                   "\n  input %b : f32" + dims({k, n}) +
                   "\n  %y = matmul @bmm(%a, %b) : f32" + dims({b, m, n}) +
                   "\n  return %y\n}\n";
  runAblation(state, ir, ir, hw::builtinConfig());
}

/// IBM's softmax ablation on one core, [512, N]: the reductions through
/// device memory (softmax as its primitive ops, each its own kernel, at
/// -O0) against the one softmax kernel that keeps them in LX (-O2).
void BM_AblationSoftmaxOneCore(benchmark::State &state) {
  const int64_t m = 512, n = state.range(0);
  const std::string t = dims({m, n}), c = dims({m, 1});
  std::string naive =
      "graph @sm {\n  input %x : f32" + t +
      "\n  %m = reduce_max @m(%x) {axes = [-1], keepdims = true} : f32" + c +
      "\n  %d = sub @d(%x, %m) : f32" + t + "\n  %e = exp @e(%d) : f32" + t +
      "\n  %s = reduce_sum @s(%e) {axes = [-1], keepdims = true} : f32" + c +
      "\n  %y = div @y(%e, %s) : f32" + t + "\n  return %y\n}\n";
  std::string ours = "graph @sm {\n  input %x : f32" + t +
                     "\n  %y = softmax @sm(%x) {axis = -1} : f32" + t +
                     "\n  return %y\n}\n";
  hw::HwConfig one = hw::builtinConfig();
  one.chip.cores = 1;
  runAblation(state, naive, ours, one);
}

/// A BERT-base encoder layer: attention with 12 heads of 64 over 512
/// tokens, a 3072-wide GELU FFN, post-norm. Built op by op so that the
/// weights are real constants.
std::unique_ptr<Graph> encoderLayer() {
  const int64_t s = 512, d = 768, h = 12, dh = 64, f = 3072;
  auto g = std::make_unique<Graph>("encoder");
  using compiler::Attribute;
  using compiler::ConstantData;
  using compiler::OpKind;
  using compiler::TensorType;
  using compiler::Value;
  auto constant = [&](const std::string &name, std::vector<int64_t> shape) {
    TensorType t{compiler::ElementType::F32, shape};
    std::vector<double> v(static_cast<size_t>(t.elementCount()));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = 0.01 * static_cast<double>(static_cast<int64_t>(i % 17) - 8);
    return g->addConstant(name, ConstantData::fromDoubles(t, v));
  };
  auto op = [&](OpKind kind, const std::string &name,
                std::vector<Value *> operands, compiler::AttrDict attrs = {}) {
    return compiler::buildOp(*g, kind, name, std::move(operands),
                             std::move(attrs))
        ->result(0);
  };
  auto linear = [&](const std::string &name, Value *x, int64_t in,
                    int64_t out) {
    return op(OpKind::Linear, name,
              {x, constant(name + ".w", {out, in}), constant(name + ".b", {out})});
  };
  auto heads = [&](const std::string &name, Value *x,
                   std::vector<int64_t> perm) {
    Value *r = op(OpKind::Reshape, name + ".split", {x},
                  {{"shape", Attribute::ints({s, h, dh})}});
    return op(OpKind::Transpose, name + ".heads", {r},
              {{"perm", Attribute::ints(perm)}});
  };
  auto norm = [&](const std::string &name, Value *x) {
    return op(OpKind::LayerNorm, name,
              {x, constant(name + ".w", {d}), constant(name + ".b", {d})},
              {{"axis", Attribute(int64_t{-1})}, {"epsilon", Attribute(1e-5)}});
  };
  Value *x = g->addInput("x", TensorType{compiler::ElementType::F32, {s, d}});
  Value *q = heads("q", linear("q", x, d, d), {1, 0, 2});
  Value *k = heads("k", linear("k", x, d, d), {1, 2, 0});
  Value *v = heads("v", linear("v", x, d, d), {1, 0, 2});
  Value *scores = op(OpKind::Matmul, "scores", {q, k});
  Value *scaled = op(OpKind::Mul, "scale", {scores, constant("scale", {1})});
  Value *p = op(OpKind::Softmax, "softmax", {scaled},
                {{"axis", Attribute(int64_t{-1})}});
  Value *ctx = op(OpKind::Matmul, "context", {p, v});
  Value *merged = op(OpKind::Transpose, "merge", {ctx},
                     {{"perm", Attribute::ints({1, 0, 2})}});
  Value *flat = op(OpKind::Reshape, "merge.flat", {merged},
                   {{"shape", Attribute::ints({s, d})}});
  Value *attn = linear("attn_out", flat, d, d);
  Value *h1 = norm("norm1", op(OpKind::Add, "residual1", {attn, x}));
  Value *up = op(OpKind::Gelu, "gelu", {linear("ffn_up", h1, d, f)});
  Value *down = linear("ffn_down", up, f, d);
  Value *y = norm("norm2", op(OpKind::Add, "residual2", {down, h1}));
  g->setOutputs({y});
  return g;
}

void BM_CompileEncoderLayer(benchmark::State &state) {
  std::unique_ptr<Graph> g = encoderLayer();
  for (auto _ : state) {
    DiagnosticEngine diags;
    compiler::CompileOptions options;
    std::optional<compiler::CompileResult> r =
        compiler::compileGraph(*g, hw::builtinConfig(), options, diags);
    SPYRE_ASSERT(r, diags.str());
    benchmark::DoNotOptimize(r);
  }
}

/// A chain of `state.range(0)` relu ops on a [7, 64] input, compiled at
/// -O2: the compile time against graph size (each op's uses and position
/// are looked up without walking the graph, so it grows linearly).
void BM_CompileReluChain(benchmark::State &state) {
  const int64_t length = state.range(0);
  auto g = std::make_unique<Graph>("chain");
  compiler::Value *v = g->addInput(
      "x", compiler::TensorType{compiler::ElementType::F32, {7, 64}});
  for (int64_t i = 0; i < length; ++i)
    v = compiler::buildOp(*g, compiler::OpKind::Relu, "r" + std::to_string(i),
                          {v})
            ->result();
  g->setOutputs({v});
  for (auto _ : state) {
    DiagnosticEngine diags;
    compiler::CompileOptions options;
    std::optional<compiler::CompileResult> r =
        compiler::compileGraph(*g, hw::builtinConfig(), options, diags);
    SPYRE_ASSERT(r, diags.str());
    benchmark::DoNotOptimize(r);
  }
  state.counters["ops"] = static_cast<double>(length);
}

BENCHMARK(BM_Matmul)
    ->Args({1024, 1024, 1024})
    ->Args({4096, 4096, 4096})
    ->Args({2048, 4096, 4096})
    ->Args({32, 4096, 4096})
    ->Args({1, 4096, 4096})
    // 64 x 128 outputs give at most 16 (M, N) blocks of 8 x 64: -O2 splits
    // K over partners that sum their partials on the reduce ring.
    ->Args({64, 16384, 128})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_BatchedMatmul)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(8192)
    ->Arg(12800)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_AblationBatchedMatmul)
    ->ArgsProduct({{4}, {1024, 4096, 12800}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_AblationSoftmaxOneCore)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_Softmax)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_LayerNorm)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_CompileEncoderLayer)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileReluChain)
    ->Arg(1000)
    ->Arg(5000)
    ->Arg(20000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

} // namespace

BENCHMARK_MAIN();
