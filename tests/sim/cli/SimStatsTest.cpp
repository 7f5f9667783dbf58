// The statistics JSON of `spyre sim` for the clean examples: golden files of
// the --timing-only runs (tests/golden/sim/<name>.stats.json, rewritten with
// SPYRE_UPDATE_GOLDEN=1), figures derived by hand from the example programs
// and configs/spyre.yaml, the identities that tie the numbers together, and
// a check that docs/sim-output.md names every key.
#include "SimRun.h"

#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <set>

namespace spyre::test {
namespace {

using nlohmann::json;

struct StatsCase {
  const char *example;
  const char *inputs;
  uint64_t instructions;
  uint64_t readBytes;
  uint64_t writeBytes;
  uint64_t macs;
  uint64_t lxHighWaterSticks; ///< highest LX stick touched + 1, per core
  const char *computeEngine;  ///< core 0's PT or SFU stream, or ""
  uint64_t computeBusy;
};

/// Names the case in test output instead of dumping its bytes.
void PrintTo(const StatsCase &c, std::ostream *os) { *os << c.example; }

// Derived from the example sources and configs/spyre.yaml:
// - dma_copy: each stream is li, li, loop, 6 x 4 body instructions, halt (28);
//   6 sticks of 128 bytes each way; LX buffer 0x100..0x105.
// - pt_matmul: 4 + 3 + 4 instructions; reads A (32 sticks) and B (128),
//   writes C (32); 16 x 128 x 64 MACs; C ends at LX 0xa0 + 32 = 0xc0. PT busy:
//   wait 1 + mm (pt.setup_cycles 8 + 131072 MACs at 512 per cycle times the
//   efficiency sqrt(2 passes / 8) = 0.5, i.e. 512) + signal 1 = 522.
// - sfu_softmax: 3 + 3 + 11 instructions; 2 sticks each way; y ends at LX
//   0x72. SFU busy: each op here is at most 128 elements, one pass of both
//   vector arrays (1 cycle) after its latency (8, transcendental 24): wait
//   1, cvt 9, rmax 9, sub 9, exp 25, rsum 9, recip 25, mul 9, cvt 9,
//   signal 1: 106.
// - ring_exchange: 2 cores x (3 + 3 + 6); 4 sticks per tile, two tiles each
//   way; LX 0x10 + 4 = 0x14.
const StatsCase kCases[] = {
    {"dma_copy", "dma_copy", 56, 768, 768, 0, 0x106, "", 0},
    {"pt_matmul", "pt_matmul", 11, 20480, 4096, 131072, 0xc0, "pt.0", 522},
    {"sfu_softmax", "sfu_softmax", 17, 256, 256, 0, 0x72, "sfu.0", 106},
    {"ring_exchange", "ring_exchange", 24, 1024, 1024, 0, 0x14, "", 0},
};

class SimStats : public testing::TestWithParam<StatsCase> {
protected:
  SimRun runTimingOnly() {
    std::string program = assembleExample(GetParam().example, makeTempDir());
    SimRun run = simulate(program, {.timingOnly = true});
    EXPECT_EQ(run.tool.exitCode, 0) << run.tool.out << run.tool.err;
    return run;
  }
};

TEST_P(SimStats, TimingOnlyStatsMatchGolden) {
  SimRun run = runTimingOnly();
  expectGolden(run.statsText,
               std::string("sim/") + GetParam().example + ".stats.json");
  expectTraceMatchesStats(run.traceText, run.stats);
}

TEST_P(SimStats, NumericsDoNotChangeTheStats) {
  SimRun timing = runTimingOnly();
  std::string program = assembleExample(GetParam().example, makeTempDir());
  SimRun full = simulate(program, {.inputs = simData(GetParam().inputs)});
  EXPECT_EQ(full.tool.exitCode, 0) << full.tool.err;
  EXPECT_EQ(full.statsText, timing.statsText);
  EXPECT_EQ(full.traceText, timing.traceText);
}

TEST_P(SimStats, FiguresMatchTheProgram) {
  const StatsCase &c = GetParam();
  json s = runTimingOnly().stats;
  EXPECT_EQ(s.at("instructions"), c.instructions);
  EXPECT_EQ(s.at("dram_read_bytes"), c.readBytes);
  EXPECT_EQ(s.at("dram_write_bytes"), c.writeBytes);
  EXPECT_EQ(s.at("mac_ops"), c.macs);
  for (const json &core : s.at("cores")) {
    EXPECT_EQ(core.at("lx_high_water_bytes"), c.lxHighWaterSticks * 128)
        << "core " << core.at("core");
    for (const json &e : core.at("engines")) {
      if (core.at("core") == 0 && e.at("engine") == c.computeEngine) {
        EXPECT_EQ(e.at("busy_cycles"), c.computeBusy) << c.computeEngine;
      }
    }
  }
}

TEST_P(SimStats, NumbersAddUp) {
  const StatsCase &c = GetParam();
  json s = runTimingOnly().stats;
  const auto total = s.at("total_cycles").get<uint64_t>();
  const double ghz = s.at("clock_ghz").get<double>();
  ASSERT_GT(total, 0u);
  EXPECT_EQ(ghz, 1.5) << "configs/spyre.yaml chip.clock_ghz";
  const double us = static_cast<double>(total) / (ghz * 1000.0);
  EXPECT_DOUBLE_EQ(s.at("simulated_us").get<double>(), us);
  const double bytes = static_cast<double>(c.readBytes + c.writeBytes);
  EXPECT_DOUBLE_EQ(s.at("achieved_dram_gbps").get<double>(), bytes / us / 1e3);
  EXPECT_DOUBLE_EQ(s.at("achieved_tflops").get<double>(),
                   2.0 * static_cast<double>(c.macs) / us / 1e6);

  // The channel moves data at the sustained one-way rate, 150 GB/s at
  // 1.5 GHz = 100 bytes per cycle (configs/spyre.yaml memory section).
  const json &mem = s.at("memory");
  EXPECT_EQ(mem.at("peak_gbps"), 204.8);
  EXPECT_EQ(mem.at("sustained_bytes_per_cycle"), 100.0);
  EXPECT_NEAR(mem.at("busy_cycles").get<double>(), bytes / 100.0, 1e-9);
  EXPECT_LE(mem.at("busy_cycles").get<double>(), static_cast<double>(total));

  EXPECT_TRUE(s.at("findings").empty());
  EXPECT_EQ(s.at("findings_dropped"), 0);
  uint64_t instructions = 0;
  for (const json &core : s.at("cores"))
    for (const json &e : core.at("engines")) {
      std::string where = "core " + core.at("core").dump() + " " +
                          e.at("engine").get<std::string>();
      uint64_t stalled = 0;
      for (const auto &[reason, cycles] : e.at("stall_cycles").items())
        stalled += cycles.get<uint64_t>();
      const auto busy = e.at("busy_cycles").get<uint64_t>();
      // idle is written as total - busy - stalls; check that this did not
      // need clamping.
      EXPECT_LE(busy + stalled, total) << where;
      EXPECT_EQ(busy + stalled + e.at("idle_cycles").get<uint64_t>(), total)
          << where;
      EXPECT_DOUBLE_EQ(e.at("utilization").get<double>(),
                       static_cast<double>(busy) / static_cast<double>(total))
          << where;
      EXPECT_GT(busy, 0u) << where;
      instructions += e.at("instructions").get<uint64_t>();
    }
  EXPECT_EQ(instructions, s.at("instructions").get<uint64_t>());
}

// A stall reason counts cycles an engine waited for that cause, so the
// memory stalls of all engines cannot exceed the cycles requests waited at
// the memory channel, and no engine waits for a DMA slot when no
// instruction has more bursts in flight than dma.max_outstanding (16): the
// largest here, pt_matmul's B load, is 16 KiB = 8 bursts of dma.burst_bytes.
TEST_P(SimStats, StallsNeverExceedTheWaitingThatCausedThem) {
  json s = runTimingOnly().stats;
  const auto memWaited = s.at("memory").at("waited_cycles").get<uint64_t>();
  uint64_t memStalls = 0;
  for (const json &core : s.at("cores"))
    for (const json &e : core.at("engines")) {
      memStalls += e.at("stall_cycles").at("memory").get<uint64_t>();
      EXPECT_EQ(e.at("stall_cycles").at("dma_slots"), 0)
          << "core " << core.at("core") << " " << e.at("engine");
    }
  EXPECT_LE(memStalls, memWaited)
      << "engines report more memory stall than requests waited at memory";
}

INSTANTIATE_TEST_SUITE_P(Examples, SimStats, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<StatsCase> &param) {
                           return std::string(param.param.example);
                         });

void collectKeys(const json &j, std::set<std::string> &keys) {
  if (j.is_object())
    for (const auto &[key, value] : j.items()) {
      keys.insert(key);
      collectKeys(value, keys);
    }
  if (j.is_array())
    for (const json &v : j)
      collectKeys(v, keys);
}

TEST(SimStatsDoc, EveryKeyAndFindingKindIsDocumented) {
  std::string doc = readSource("docs/sim-output.md");
  std::string dir = makeTempDir();
  std::set<std::string> keys, kinds;
  // ring_exchange has two cores and a ring engine; race has a finding.
  for (const char *example :
       {"ring_exchange", "race", "deadlock", "oob", "uninit"}) {
    SimRun run = simulate(assembleExample(example, dir), {.timingOnly = true});
    collectKeys(run.stats, keys);
    for (const json &f : run.stats.at("findings"))
      kinds.insert(f.at("kind").get<std::string>());
  }
  ASSERT_GT(keys.size(), 20u);
  for (const std::string &key : keys)
    EXPECT_NE(doc.find("`" + key + "`"), std::string::npos)
        << "docs/sim-output.md does not name stats key `" << key << "`";
  ASSERT_EQ(kinds.size(), 4u);
  for (const std::string &kind : kinds)
    EXPECT_NE(doc.find("`" + kind + "`"), std::string::npos)
        << "docs/sim-output.md does not name finding kind `" << kind << "`";
}

} // namespace
} // namespace spyre::test
