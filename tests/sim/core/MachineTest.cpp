// The Machine (cores, event loop, sync, DMA, ring, schedule checks) run
// without SystemC on small assembled programs.
#include "sim/core/Machine.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "numerics/Dlf16.h"
#include "sim/output/RunOutput.h"
#include "sim/core/TensorIo.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace spyre;
using namespace spyre::sim;

namespace {

isa::Program assembleText(const std::string &text) {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(text, "test.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return p;
}

isa::Program assembleExample(const std::string &name) {
  return assembleText(test::readSource("examples/asm/" + name));
}

std::vector<FindingKind> kinds(const Machine &m) {
  std::vector<FindingKind> k;
  for (const Finding &f : m.findings())
    k.push_back(f.kind);
  return k;
}

/// Fills every input of the program with deterministic values, different
/// for each tensor so that mixing two up shows.
void fillInputs(const isa::Program &p, Machine &m) {
  int tensor = 0;
  for (const isa::TensorDecl &t : p.tensors) {
    if (t.kind != isa::TensorKind::Input)
      continue;
    ++tensor;
    std::vector<float> v(isa::elementCount(t.hostShape));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(
                 (static_cast<int>((i + 13 * tensor) * 37 % 101) - 50)) /
             8.0f;
    writeTensor(t, makeNpyF32(v, t.hostShape), t.name, m.deviceMemory());
  }
}

std::vector<float> output(const isa::Program &p, Machine &m,
                          const std::string &name) {
  return npyF32Values(readTensor(*p.findTensor(name), m.deviceMemory()), name);
}

} // namespace

TEST(Machine, ScalarProgramTakesOneCyclePerScalarInstruction) {
  isa::Program p = assembleText(".core 0\n.engine sfu.0\n li r1, 5\n"
                                " addi r2, r1, 3\n li r3, 1\n halt\n");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  m.run();
  EXPECT_TRUE(m.findings().empty());
  EXPECT_EQ(m.totalCycles(),
            3u * static_cast<Cycle>(hw::builtinConfig().sequencer.scalarCycles));
  EXPECT_EQ(m.instructionsExecuted(), 4u);
}

TEST(Machine, DmaCopyMovesTheData) {
  isa::Program p = assembleExample("dma_copy.s");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, m);
  m.run();
  EXPECT_TRUE(m.findings().empty()) << m.findings()[0].str();
  std::vector<float> x = output(p, m, "x"), y = output(p, m, "y");
  EXPECT_EQ(x, y);
  EXPECT_EQ(m.deviceReadBytes(), 6u * 128);
  EXPECT_EQ(m.deviceWriteBytes(), 6u * 128);
  EXPECT_GT(m.totalCycles(), 0u);
}

TEST(Machine, SoftmaxRowMatchesDoubleReference) {
  isa::Program p = assembleExample("sfu_softmax.s");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, m);
  m.run();
  ASSERT_TRUE(m.findings().empty()) << m.findings()[0].str();
  std::vector<float> x = output(p, m, "x"), y = output(p, m, "y");
  double mx = -1e30, sum = 0;
  for (float v : x)
    mx = std::max(mx, static_cast<double>(v));
  for (float v : x)
    sum += std::exp(v - mx);
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = std::exp(x[i] - mx) / sum;
    // DL16 keeps 10 significant bits: within half an ulp of 2^-9 relative.
    EXPECT_NEAR(y[i], ref, ref * (1.0 / 512) + 1e-9) << i;
  }
}

TEST(Machine, MatmulTileMatchesReference) {
  isa::Program p = assembleExample("pt_matmul.s");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, m);
  m.run();
  ASSERT_TRUE(m.findings().empty()) << m.findings()[0].str();
  EXPECT_EQ(m.macOps(), 16u * 128 * 64);
  // The inputs read back are the DL16 values the PT multiplied; the sums of
  // these multiples of 1/8 are exact in FP32, so the result must be exact.
  std::vector<float> a = output(p, m, "A"), b = output(p, m, "B"),
                     c = output(p, m, "C");
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 64; ++j) {
      double ref = 0;
      for (int k = 0; k < 128; ++k)
        ref += static_cast<double>(a[i * 128 + k]) * b[k * 64 + j];
      EXPECT_EQ(c[i * 64 + j], static_cast<float>(ref)) << i << "," << j;
    }
}

TEST(Machine, RingExchangeSwapsTiles) {
  isa::Program p = assembleExample("ring_exchange.s");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, m);
  m.run();
  ASSERT_TRUE(m.findings().empty()) << m.findings()[0].str();
  std::vector<float> a0 = output(p, m, "a0"), a1 = output(p, m, "a1");
  ASSERT_NE(a0, a1);
  EXPECT_EQ(output(p, m, "b0"), a1);
  EXPECT_EQ(output(p, m, "b1"), a0);
}

TEST(Machine, FaultyExamplesTriggerExactlyTheirFinding) {
  struct Case {
    const char *file;
    FindingKind kind;
  } cases[] = {{"race.s", FindingKind::LxRace},
               {"deadlock.s", FindingKind::Deadlock},
               {"oob.s", FindingKind::OutOfBounds},
               {"uninit.s", FindingKind::LxUninitRead}};
  for (const Case &c : cases) {
    isa::Program p = assembleExample(c.file);
    Machine m(hw::builtinConfig(), p, SimOptions{});
    fillInputs(p, m);
    m.run();
    ASSERT_FALSE(m.findings().empty()) << c.file;
    for (const Finding &f : m.findings())
      EXPECT_EQ(f.kind, c.kind) << c.file << ": " << f.str();
  }
}

TEST(Machine, FixedTwinsRunClean) {
  for (const char *file :
       {"race_fixed.s", "deadlock_fixed.s", "oob_fixed.s", "uninit_fixed.s"}) {
    isa::Program p = assembleExample(file);
    Machine m(hw::builtinConfig(), p, SimOptions{});
    fillInputs(p, m);
    m.run();
    EXPECT_TRUE(m.findings().empty()) << file << ": " << m.findings()[0].str();
  }
}

TEST(Machine, RaceFindingNamesBothInstructions) {
  isa::Program p = assembleExample("race.s");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, m);
  m.run();
  ASSERT_EQ(m.findings().size(), 1u);
  const Finding &f = m.findings()[0];
  EXPECT_EQ(f.core, 0);
  EXPECT_EQ(f.stream, "core 0 sfu.0");
  EXPECT_EQ(f.sourceOp, "relu");
  EXPECT_EQ(f.addressRange, "lx[0x0, 0x1) sticks");
  EXPECT_NE(f.conflicting.find("core 0 dma.load #0"), std::string::npos)
      << f.conflicting;
}

TEST(Machine, DeadlockNamesEveryWaiter) {
  isa::Program p = assembleExample("deadlock.s");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, m);
  m.run();
  ASSERT_EQ(m.findings().size(), 1u);
  EXPECT_EQ(m.findings()[0].stream, "core 0 dma.store");
  EXPECT_NE(m.findings()[0].message.find("counter c1"), std::string::npos);
}

TEST(Machine, MaxCyclesStopsALongLoop) {
  isa::Program p = assembleText(".core 0\n.engine sfu.0\n loop 60000, e1\n"
                                " loop 60000, e2\n nop\ne2:\ne1:\n halt\n");
  SimOptions o;
  o.maxCycles = 100000;
  Machine m(hw::builtinConfig(), p, o);
  m.run();
  EXPECT_EQ(kinds(m), std::vector<FindingKind>{FindingKind::MaxCycles});
}

TEST(Machine, TimingOnlyGivesTheSameCycles) {
  isa::Program p = assembleExample("pt_matmul.s");
  Machine a(hw::builtinConfig(), p, SimOptions{});
  fillInputs(p, a);
  a.run();
  SimOptions timing;
  timing.numerics = false;
  Machine b(hw::builtinConfig(), p, timing);
  b.run();
  EXPECT_EQ(a.totalCycles(), b.totalCycles());
  EXPECT_EQ(a.instructionsExecuted(), b.instructionsExecuted());
}

TEST(Machine, RunsAreDeterministic) {
  isa::Program p = assembleExample("ring_exchange.s");
  SimOptions o;
  o.trace = true;
  Machine a(hw::builtinConfig(), p, o), b(hw::builtinConfig(), p, o);
  fillInputs(p, a);
  fillInputs(p, b);
  a.run();
  b.run();
  EXPECT_EQ(statsJson(a), statsJson(b));
  EXPECT_EQ(traceJson(a), traceJson(b));
}

// The schedule checks and the records are observers: attached or not, a run
// takes the same cycles, stalls and numbers; without the checks it reports
// only what the machine itself finds (bounds, deadlocks), and without the
// records it keeps none.
TEST(Machine, ObserversChangeNothingButWhatTheyObserve) {
  auto isCheckFinding = [](FindingKind k) {
    return k == FindingKind::LxRace || k == FindingKind::LxUninitRead ||
           k == FindingKind::MemUninitRead;
  };
  for (const char *file :
       {"dma_copy.s", "pt_matmul.s", "sfu_softmax.s", "ring_exchange.s",
        "race.s", "deadlock.s", "oob.s", "uninit.s"}) {
    isa::Program p = assembleExample(file);
    SimOptions both;
    both.trace = true;
    Machine ref(hw::builtinConfig(), p, both);
    fillInputs(p, ref);
    ref.run();
    for (const auto &[checks, trace] :
         {std::pair{true, false}, std::pair{false, true}, std::pair{false, false}}) {
      SimOptions o;
      o.checks = checks;
      o.trace = trace;
      Machine m(hw::builtinConfig(), p, o);
      fillInputs(p, m);
      m.run();
      const std::string what = std::string(file) + (checks ? " checks" : "") +
                               (trace ? " records" : "");
      EXPECT_EQ(m.totalCycles(), ref.totalCycles()) << what;
      EXPECT_EQ(m.instructionsExecuted(), ref.instructionsExecuted()) << what;
      ASSERT_EQ(m.numStreams(), ref.numStreams());
      for (int s = 0; s < m.numStreams(); ++s) {
        EXPECT_EQ(m.streamStats(s).busyCycles, ref.streamStats(s).busyCycles) << what;
        EXPECT_EQ(m.streamStats(s).stallCycles, ref.streamStats(s).stallCycles) << what;
        EXPECT_EQ(m.streamStats(s).finishedAt, ref.streamStats(s).finishedAt) << what;
      }
      for (const isa::TensorDecl &t : p.tensors) {
        if (t.kind == isa::TensorKind::Output) {
          EXPECT_EQ(output(p, m, t.name), output(p, ref, t.name)) << what;
        }
      }
      std::vector<FindingKind> expected;
      for (FindingKind k : kinds(ref))
        if (checks || !isCheckFinding(k))
          expected.push_back(k);
      EXPECT_EQ(kinds(m), expected) << what;
      EXPECT_EQ(m.trace().size(), trace ? ref.trace().size() : 0u) << what;
      EXPECT_EQ(m.tracing(), trace) << what;
    }
  }
}

// Names are bytes from the program, not always UTF-8: the reports stay valid
// JSON, with U+FFFD for each invalid byte (found by the `sim` fuzz target).
TEST(Machine, ReportsReplaceInvalidUtf8InNames) {
  isa::Program p = assembleText(".program \"p\xff\"\n.core 0\n.engine sfu.0\n"
                                ".op \"op\xfe\"\n nop\n halt\n");
  SimOptions o;
  o.trace = true;
  Machine m(hw::builtinConfig(), p, o);
  m.run();
  EXPECT_NE(statsJson(m).find("\"p\xef\xbf\xbd\""), std::string::npos);
  EXPECT_NE(traceJson(m).find("\"op\xef\xbf\xbd\""), std::string::npos);
}

// A receive that reaches past the end of LX is an out-of-bounds finding; the
// transfer moves no data (found by the `program` fuzz target: the data and
// the race check wrote past LX).
TEST(Machine, RingTransferPastLxIsAFinding) {
  isa::Program p = assembleText(".core 0\n.engine ring\n send 1, 0x0, n=4\n halt\n"
                                ".core 1\n.engine ring\n recv 0, 0x3ffe, n=4\n"
                                " halt\n");
  for (bool numerics : {false, true}) {
    SimOptions o;
    o.numerics = numerics;
    Machine m(hw::builtinConfig(), p, o);
    m.run();
    ASSERT_EQ(m.findings().size(), 2u) << numerics;
    EXPECT_EQ(m.findings()[0].kind, FindingKind::LxUninitRead);
    EXPECT_EQ(m.findings()[1].kind, FindingKind::OutOfBounds);
    EXPECT_EQ(m.findings()[1].addressRange, "lx[0x3ffe, 0x4002) sticks");
  }
}

// With --max-cycles, work whose cycles cannot end before the limit is not
// run: walking its rows would take the host minutes (these would), so the
// run stops at once with a max-cycles finding on that instruction. The
// expected figures are worked out by hand from configs/spyre.yaml.
namespace {

/// Runs `text` with numerics and checks on and a limit of 1,000,000 cycles,
/// and expects exactly one max-cycles finding, on instruction 0 of `stream`.
Finding stoppedByLimit(const std::string &text, const std::string &stream) {
  isa::Program p = assembleText(text);
  SimOptions o;
  o.maxCycles = 1000000;
  Machine m(hw::builtinConfig(), p, o);
  m.run();
  EXPECT_EQ(kinds(m), std::vector<FindingKind>{FindingKind::MaxCycles});
  if (m.findings().empty())
    return {};
  const Finding &f = m.findings()[0];
  EXPECT_EQ(f.stream, stream);
  EXPECT_EQ(f.instrIndex, 0u);
  EXPECT_EQ(f.cycle, 1000000u);
  EXPECT_EQ(m.instructionsExecuted(), 1u);
  return f;
}

} // namespace

TEST(Machine, MaxCyclesStopsAHugeSfuOpBeforeItRuns) {
  const hw::HwConfig &c = hw::builtinConfig();
  ASSERT_EQ(c.lxSticks(), 16384);
  ASSERT_EQ(c.sfu.transcendentalCyclesPerStick, 1);
  ASSERT_EQ(c.sfu.transcendentalLatencyCycles, 24);
  ASSERT_EQ(c.sfu.arraysPerCorelet * c.sfu.dl16Lanes, 128);
  // The whole LX as one row, exp'd in place 65,535 times (row strides 0):
  // 16384 * 65535 = 1,073,725,440 DL16 sticks, two a cycle over both
  // arrays, plus 24.
  Finding f = stoppedByLimit(".core 0\n.engine sfu.0\n"
                             " exp 0x0, 0x0, n=16384, m=65535, ds=0, ss=0\n"
                             " halt\n",
                             "core 0 sfu.0");
  EXPECT_EQ(f.message, "the run passed --max-cycles 1000000: exp of 1073725440 "
                       "sticks cannot end before it (at least 536862744 "
                       "cycles from cycle 0)");
}

TEST(Machine, MaxCyclesStopsAHugeMatmulBeforeItRuns) {
  const hw::HwConfig &c = hw::builtinConfig();
  ASSERT_EQ(c.pt.peRows * c.pt.peCols * c.pt.simdWidth, 512);
  ASSERT_EQ(c.pt.setupCycles, 8);
  // Every block of A, B and C on the same LX rows (strides 0), so it stays
  // in LX: 16384 * 16384 * 65472 MACs at 512 per cycle (full rate: 2048
  // passes), plus 8.
  Finding f = stoppedByLimit(
      ".core 0\n.engine pt.0\n"
      " mm 0x0, 0x0, 0x0, m=16384, k=16384, n=65472, as=0, bs=0, cs=0\n"
      " halt\n",
      "core 0 pt.0");
  EXPECT_EQ(f.message, "the run passed --max-cycles 1000000: mm of "
                       "17575006175232 MACs cannot end before it (at least "
                       "34326183944 cycles from cycle 0)");
}

TEST(Machine, MaxCyclesStopsAHugeRingTransferBeforeItRuns) {
  const hw::HwConfig &c = hw::builtinConfig();
  ASSERT_EQ(c.ring.bytesPerCycle, 128);
  ASSERT_EQ(c.ring.hopLatencyCycles, 2);
  // 1,073,725,440 sticks of 128 bytes at 128 bytes a cycle, plus one hop.
  // Core 0's send is posted first and stops the run.
  Finding f = stoppedByLimit(
      ".core 0\n.engine ring\n send 1, 0x0, n=16384, m=65535, s=0\n halt\n"
      ".core 1\n.engine ring\n recv 0, 0x0, n=16384, m=65535, s=0\n halt\n",
      "core 0 ring");
  EXPECT_EQ(f.message, "the run passed --max-cycles 1000000: send of "
                       "1073725440 sticks cannot end before it (at least "
                       "1073725442 cycles from cycle 0)");
}

TEST(Machine, MaxCyclesStopsAHugeReduceBeforeItRuns) {
  const hw::HwConfig &c = hw::builtinConfig();
  ASSERT_EQ(c.reduceRing.bytesPerCycle, 32);
  ASSERT_EQ(c.reduceRing.hopLatencyCycles, 2);
  // The receiving side is posted first here: the reduce ring's 32 bytes a
  // cycle give 4 cycles a stick, plus one hop.
  Finding f = stoppedByLimit(
      ".core 0\n.engine ring\n racc 1, 0x0, n=16384, m=65535, s=0\n halt\n"
      ".core 1\n.engine ring\n rsend 0, 0x0, n=16384, m=65535, s=0\n halt\n",
      "core 0 ring");
  EXPECT_EQ(f.message, "the run passed --max-cycles 1000000: racc of "
                       "1073725440 sticks cannot end before it (at least "
                       "4294901762 cycles from cycle 0)");
}

TEST(Machine, MaxCyclesStopsALongHostOpBeforeItRuns) {
  const hw::HwConfig &c = hw::builtinConfig();
  ASSERT_EQ(c.chip.clockGhz, 1.5);
  ASSERT_EQ(c.host.pcieLatencyCycles, 1500);
  ASSERT_EQ(c.host.pcieGBps, 63.0);
  ASSERT_EQ(c.host.hostGflops, 500.0);
  // One stick each way: 1500 + ceil(128 * 1.5 / 63) = 1504 cycles; 10^12
  // flops at 500 GFLOP/s and 1.5 GHz: 3e9 cycles.
  isa::Program p = assembleText(
      ".tensor input x fp32 [1, 32] @ 0x0\n"
      ".tensor output y fp32 [1, 32] @ 0x1\n"
      ".host \"cos\" \"Cos\" \"{}\" in x out y flops 1000000000000\n"
      ".core 0\n.engine dma.load\n host 0\n halt\n");
  SimOptions o;
  o.maxCycles = 1000000;
  Machine m(hw::builtinConfig(), p, o);
  fillInputs(p, m);
  m.run();
  ASSERT_EQ(kinds(m), std::vector<FindingKind>{FindingKind::MaxCycles});
  EXPECT_EQ(m.findings()[0].stream, "core 0 dma.load");
  EXPECT_EQ(m.findings()[0].message,
            "the run passed --max-cycles 1000000: host op 'cos' cannot end "
            "before it (at least 3000003008 cycles from cycle 0)");
  // Not run: y keeps the zeros of fresh device memory, not cos(x).
  EXPECT_EQ(output(p, m, "y"), std::vector<float>(32, 0.0f));
}

TEST(Machine, MaxCyclesStopsAnSfuOpOnlyWhenItWouldEndPastTheLimit) {
  // exp of 4 DL16 sticks over both arrays: 24 + 2 = 26 cycles. Ending at the
  // limit is allowed.
  isa::Program p = assembleText(".core 0\n.engine sfu.0\n exp 0x0, 0x0, n=4\n"
                                " halt\n");
  SimOptions o;
  o.checks = false; // LX is never written; only the limit is looked at
  o.maxCycles = 26;
  Machine atLimit(hw::builtinConfig(), p, o);
  atLimit.run();
  EXPECT_TRUE(atLimit.findings().empty());
  EXPECT_EQ(atLimit.totalCycles(), 26u);
  o.maxCycles = 25;
  Machine past(hw::builtinConfig(), p, o);
  past.run();
  ASSERT_EQ(kinds(past), std::vector<FindingKind>{FindingKind::MaxCycles});
  EXPECT_EQ(past.findings()[0].message,
            "the run passed --max-cycles 25: exp of 4 sticks cannot end "
            "before it (at least 26 cycles from cycle 0)");
}

// The bounds are lower bounds: a limit of exactly a clean run's own cycles
// stops nothing and changes nothing.
TEST(Machine, MaxCyclesAtARunsOwnLengthChangesNothing) {
  for (const char *file :
       {"dma_copy.s", "pt_matmul.s", "sfu_softmax.s", "ring_exchange.s",
        "race_fixed.s", "deadlock_fixed.s", "oob_fixed.s", "uninit_fixed.s"}) {
    isa::Program p = assembleExample(file);
    SimOptions o;
    o.trace = true;
    Machine free(hw::builtinConfig(), p, o);
    fillInputs(p, free);
    free.run();
    ASSERT_TRUE(free.findings().empty()) << file;
    o.maxCycles = free.totalCycles();
    Machine limited(hw::builtinConfig(), p, o);
    fillInputs(p, limited);
    limited.run();
    EXPECT_TRUE(limited.findings().empty())
        << file << ": " << limited.findings()[0].str();
    EXPECT_EQ(limited.totalCycles(), free.totalCycles()) << file;
    EXPECT_EQ(limited.instructionsExecuted(), free.instructionsExecuted())
        << file;
    EXPECT_EQ(limited.trace().size(), free.trace().size()) << file;
  }
}
