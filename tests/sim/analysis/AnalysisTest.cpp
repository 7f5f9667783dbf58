// The schedule analyses (sim/analysis) on hand-built profiles with
// hand-computed answers, and on real runs of the Machine: every stalled
// cycle has one reason and busy + stalls + idle is every engine's total,
// waits name the core that released them, and the critical path adds up to
// the run's cycles.
#include "sim/analysis/Summary.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "sim/core/Activity.h"
#include "sim/core/Machine.h"
#include "sim/output/RunOutput.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace spyre;
using namespace spyre::sim;

namespace {

/// A profile of two streams on two cores, built record by record.
struct ProfileBuilder {
  Profile p;
  ProfileBuilder() {
    p.program = "hand";
    p.clockGhz = 1.5;
    p.streams = {{0, "dma.load"}, {1, "pt.0"}};
  }
  int64_t add(uint32_t stream, const char *mnemonic, const char *op, Cycle start,
              Cycle end, Cycle busy) {
    InstrRecord r;
    r.stream = stream;
    r.mnemonic = p.intern(mnemonic);
    r.op = p.intern(op);
    r.start = r.ready = start;
    r.end = end;
    r.busy = busy;
    r.stall[static_cast<size_t>(StallReason::Memory)] = end - start - busy;
    p.records.push_back(r);
    return static_cast<int64_t>(p.records.size()) - 1;
  }
  /// A record released at `ready` by `by` over an edge.
  int64_t addReleased(uint32_t stream, const char *mnemonic, const char *op,
                      Cycle start, Cycle ready, Cycle end, int64_t by, ReleaseEdge edge,
                      StallReason waiting) {
    int64_t i = add(stream, mnemonic, op, start, end, end - ready);
    InstrRecord &r = p.records[static_cast<size_t>(i)];
    r.stall = {};
    r.stall[static_cast<size_t>(waiting)] = ready - start;
    r.ready = ready;
    r.releasedBy = by;
    r.edge = edge;
    return i;
  }
};

Cycle pathCycles(const std::vector<PathSegment> &path) {
  Cycle sum = 0;
  for (const PathSegment &s : path)
    sum += s.cycles();
  return sum;
}

// Core 0 loads for 100 cycles (20 of them waiting for memory) and signals
// core 1, whose token arrives 10 cycles after the signal ended; core 1 then
// multiplies for 200 cycles.
TEST(CriticalPath, FollowsARemoteSignal) {
  ProfileBuilder b;
  b.add(0, "ld", "load", 0, 100, 80);
  int64_t sig = b.add(0, "signal", "load", 100, 101, 1);
  b.add(0, "halt", "load", 101, 101, 0);
  b.addReleased(1, "wait", "mm", 0, 111, 112, sig, ReleaseEdge::Signal,
                StallReason::RemoteSignal);
  b.add(1, "mm", "mm", 112, 312, 200);
  b.add(1, "halt", "mm", 312, 312, 0);
  b.p.totalCycles = 312;
  std::vector<PathSegment> path = criticalPath(b.p);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].where, "core 0 dma.load");
  EXPECT_EQ(path[0].what, "ld, signal");
  EXPECT_EQ(path[0].start, 0u);
  EXPECT_EQ(path[0].end, 101u);
  EXPECT_EQ(path[0].busy, 81u);
  EXPECT_EQ(path[0].bandwidth, 20u);
  EXPECT_EQ(path[1].edge, ReleaseEdge::Signal);
  EXPECT_EQ(path[1].where, "core 0 dma.load -> core 1 pt.0");
  EXPECT_EQ(path[1].cycles(), 10u) << "the signal's travel to core 1";
  // The wait counts from its release; its earlier waiting is not on the path.
  EXPECT_EQ(path[2].what, "wait, mm, halt");
  EXPECT_EQ(path[2].op, "mm");
  EXPECT_EQ(path[2].start, 111u);
  EXPECT_EQ(path[2].end, 312u);
  EXPECT_EQ(pathCycles(path), 312u);
}

// A receive posted at 10 waits for its send, posted at 50 when the
// sender's previous instruction ended; the transfer takes 20 cycles.
TEST(CriticalPath, GoesBehindALatePostedSend) {
  ProfileBuilder b;
  b.p.streams = {{0, "ring"}, {1, "ring"}};
  b.add(0, "ld", "a", 0, 50, 50);
  int64_t send = b.add(0, "send", "x", 50, 70, 20);
  b.add(1, "li", "b", 0, 10, 10);
  b.addReleased(1, "recv", "x", 10, 50, 70, send, ReleaseEdge::Transfer,
                StallReason::Peer);
  b.p.totalCycles = 70;
  std::vector<PathSegment> path = criticalPath(b.p);
  // Last to finish: both end at 70; the lower stream (the send) is taken,
  // and its stream ran without waiting: one run per op.
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].what, "ld");
  EXPECT_EQ(path[1].what, "send");
  EXPECT_EQ(path[1].op, "x");
  // Ending at the receive instead goes through the edge to the ld.
  b.p.records[static_cast<size_t>(send)].end = 69;
  b.p.records[static_cast<size_t>(send)].busy = 19;
  path = criticalPath(b.p);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].what, "ld");
  EXPECT_EQ(path[1].edge, ReleaseEdge::Transfer);
  EXPECT_EQ(path[1].cycles(), 0u);
  EXPECT_EQ(path[2].what, "recv");
  EXPECT_EQ(path[2].start, 50u);
  EXPECT_EQ(pathCycles(path), 70u);
}

TEST(CriticalPath, APartialProfileStartsOutsideTheTrace) {
  ProfileBuilder b;
  b.add(1, "mm", "mm", 400, 600, 200);
  b.p.totalCycles = 650;
  b.p.complete = false;
  std::vector<PathSegment> path = criticalPath(b.p);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].where, "(outside the trace)");
  EXPECT_EQ(path[0].cycles(), 400u);
  EXPECT_EQ(path[2].where, "(outside the trace)");
  EXPECT_EQ(pathCycles(path), 650u);
}

// pt_matmul's figures (tests/golden/sim/pt_matmul.stats.json): 131072 MACs,
// 20480 + 4096 bytes, 1298 cycles at 1.5 GHz, one core of 1024 MAC/cycle,
// memory peak 204.8 GB/s.
TEST(Roofline, PtMatmulIsMemoryBound) {
  OpSummary op;
  op.first = 0;
  op.last = 1298;
  op.macs = 131072;
  op.readBytes = 20480;
  op.writeBytes = 4096;
  op.cores = 1;
  Roofline r = rooflineOf(op, 1.5, 1024, 204.8);
  const double intensity = 2.0 * 131072 / 24576;    // 10.667 FLOP/B
  const double compute = 2.0 * 1024 * 1.5e9 / 1e12; // 3.072 TFLOP/s
  const double memory = intensity * 204.8e9 / 1e12;  // 2.185 TFLOP/s
  EXPECT_DOUBLE_EQ(r.intensity, intensity);
  EXPECT_DOUBLE_EQ(r.bound, memory);
  EXPECT_LT(memory, compute);
  EXPECT_EQ(r.regime, "memory-bound");
  EXPECT_EQ(r.unit, "TFLOP/s");
  const double achieved = 2.0 * 131072 / (1298 / 1.5e9) / 1e12;
  EXPECT_DOUBLE_EQ(r.achieved, achieved);
  EXPECT_DOUBLE_EQ(r.fraction, achieved / memory);

  // Eight times the data reuse crosses the ridge point.
  op.readBytes /= 8;
  op.writeBytes /= 8;
  EXPECT_EQ(rooflineOf(op, 1.5, 1024, 204.8).regime, "compute-bound");
  EXPECT_DOUBLE_EQ(rooflineOf(op, 1.5, 1024, 204.8).bound, compute);
  // Moving data only: measured against the memory peak in GB/s.
  op.macs = 0;
  Roofline copy = rooflineOf(op, 1.5, 1024, 204.8);
  EXPECT_EQ(copy.unit, "GB/s");
  EXPECT_EQ(copy.regime, "memory-bound");
  EXPECT_DOUBLE_EQ(copy.bound, 204.8);
}

TEST(WindowCounter, SpreadsAmountsExactlyOverWindows) {
  WindowCounter c(1000);
  c.add(500, 1500, 1000); // half in each window
  ASSERT_EQ(c.sums().size(), 2u);
  EXPECT_EQ(c.sums()[0], 500u);
  EXPECT_EQ(c.sums()[1], 500u);
  c.add(999, 1002, 10); // 1 of 3 cycles in window 0: floor(10/3) = 3
  EXPECT_EQ(c.sums()[0], 503u);
  EXPECT_EQ(c.sums()[1], 507u);
  c.add(2500, 2500, 7); // zero length: one cycle
  ASSERT_EQ(c.sums().size(), 3u);
  EXPECT_EQ(c.sums()[2], 7u);
  uint64_t sum = 0;
  for (uint64_t v : c.sums())
    sum += v;
  EXPECT_EQ(sum, 1000u + 10u + 7u);
}

// ------------------------------------------------------------ real runs

isa::Program assemble(const std::string &text) {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(text, "test.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return p;
}

Machine &runTraced(std::unique_ptr<Machine> &holder, const isa::Program &p) {
  SimOptions o;
  o.numerics = false;
  o.trace = true;
  holder = std::make_unique<Machine>(hw::builtinConfig(), p, o);
  holder->run();
  return *holder;
}

/// Every engine's busy + stalls + idle is the run's total, every slice's
/// busy + stalls its duration, and the critical path adds up.
void expectEverythingAddsUp(const Machine &m) {
  Summary s = summarize(profileOf(m));
  ASSERT_FALSE(s.engines.empty());
  for (const EngineSummary &e : s.engines)
    EXPECT_EQ(e.total(), m.totalCycles()) << "core " << e.core << " " << e.engine;
  for (const TraceSlice &t : m.trace()) {
    Cycle stalled = 0;
    for (Cycle c : t.stalls())
      stalled += c;
    EXPECT_EQ(t.busy + stalled, t.end - t.start) << "slice of stream " << t.stream;
  }
  EXPECT_EQ(pathCycles(s.criticalPath), m.totalCycles());
  // Read where they are, the records give the same ops and path as copied.
  const MachineRecords records(m);
  EXPECT_EQ(opsJson(opSummaries(records.profile(), records)), opsJson(s.ops));
  EXPECT_EQ(criticalPathJson(criticalPath(records.profile(), records)),
            criticalPathJson(s.criticalPath));
  // The Machine's own totals agree with the records.
  for (int st = 0; st < m.numStreams(); ++st) {
    Cycle busy = 0;
    for (const TraceSlice &t : m.trace())
      if (static_cast<int>(t.stream) == st)
        busy += t.busy;
    EXPECT_EQ(busy, m.streamStats(st).busyCycles) << "stream " << st;
  }
}

Cycle stallOf(const Machine &m, int stream, StallReason r) {
  return m.streamStats(stream).stallCycles[static_cast<size_t>(r)];
}

TEST(StallAttribution, ExamplesAddUp) {
  for (const char *name : {"dma_copy", "pt_matmul", "sfu_softmax", "ring_exchange",
                           "deadlock", "race"}) {
    SCOPED_TRACE(name);
    isa::Program p = assemble(test::readSource(std::string("examples/asm/") + name + ".s"));
    std::unique_ptr<Machine> holder;
    expectEverythingAddsUp(runTraced(holder, p));
  }
}

// Core 1 waits for core 0's signal (remote), then for its own (local); core
// 0 arrives at a barrier 20 cycles later than core 1; core 1's send waits
// for core 0's receive.
const char *const kTwoCores = R"(
.core 0
.engine sfu.0
    nop
    signal c0, 1, core=1
    loop 20, l
    nop
l:
    barrier 0, 2
    recv 1, 0x10, n=1
    halt
.core 1
.engine sfu.0
    wait c0, 1
    signal c1, 1
    wait c1, 1
    barrier 0, 2
    send 0, 0x0, n=1
    halt
)";

TEST(StallAttribution, NamesWhatEachWaitWaitedFor) {
  // The sfu engine has no ring instructions; use the ring engine instead.
  std::string text = kTwoCores;
  for (size_t at; (at = text.find(".engine sfu.0")) != std::string::npos;)
    text.replace(at, 13, ".engine ring");
  isa::Program p = assemble(text);
  std::unique_ptr<Machine> holder;
  Machine &m = runTraced(holder, p);
  ASSERT_TRUE(m.findings().empty() || m.findings()[0].kind != FindingKind::Deadlock)
      << m.findings()[0].str();
  expectEverythingAddsUp(m);
  const int s0 = 0, s1 = 1;
  EXPECT_GT(stallOf(m, s1, StallReason::RemoteSignal), 0u);
  EXPECT_EQ(stallOf(m, s1, StallReason::Signal), 0u)
      << "core 1's own signal arrives one sync latency later, after its wait "
         "started: no wait";
  EXPECT_GT(stallOf(m, s1, StallReason::Barrier), 0u);
  // Core 0 reaches the barrier last: it waits only for the release.
  EXPECT_LT(stallOf(m, s0, StallReason::Barrier), stallOf(m, s1, StallReason::Barrier));
  // Core 1's barrier slice was released by core 0's arrival.
  bool barrierEdge = false, remoteEdge = false;
  for (const TraceSlice &t : m.trace()) {
    if (t.edge == ReleaseEdge::Barrier) {
      barrierEdge = true;
      EXPECT_EQ(t.stream, 1u);
      EXPECT_EQ(m.trace()[static_cast<size_t>(t.releasedBy)].stream, 0u);
    }
    if (t.edge == ReleaseEdge::Signal && t.stream == 1u) {
      remoteEdge = true;
      const TraceSlice &by = m.trace()[static_cast<size_t>(t.releasedBy)];
      EXPECT_EQ(by.stream, 0u);
      EXPECT_GT(t.ready, by.end) << "the signal travels over the ring";
    }
  }
  EXPECT_TRUE(barrierEdge);
  EXPECT_TRUE(remoteEdge);
  // The critical path ends with core 0's barrier arrival releasing core 1.
  Summary s = summarize(profileOf(m));
  bool throughBarrier = false;
  for (const PathSegment &seg : s.criticalPath)
    throughBarrier |= seg.edge == ReleaseEdge::Barrier;
  EXPECT_FALSE(throughBarrier)
      << "core 0 arrived last, so the path runs along core 0 into the barrier";
}

} // namespace
