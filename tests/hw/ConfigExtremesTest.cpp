// Every number of the config at the ends of its range: the config checks
// pass, and a model compiles and runs on the simulator without an abort, an
// internal error or a nonsensical figure. A range in hw/ConfigSchema is a
// promise that the rest of the code lives with every value inside it.
#include "hw/ConfigSchema.h"
#include "hw/HwConfig.h"
#include "support/Diagnostic.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

using namespace spyre;
using namespace spyre::hw;
using namespace spyre::test;

namespace {

int64_t smallestInt(const ParamInfo &p, const HwConfig &c) {
  // A fixed key (chip.stick_bytes) has one value, both of its ends.
  if (p.rules & rule::kFixed)
    return p.maxValue;
  int64_t v = (p.rules & rule::kPositive) ? 1 : 0;
  if (p.rules & (rule::kMultipleOf4 | rule::kPowerOfTwo))
    v = 4;
  if (p.rules & rule::kWholeSticks)
    v = c.chip.stickBytes;
  return v;
}

int64_t largestInt(const ParamInfo &p, const HwConfig &c) {
  int64_t v = p.maxValue;
  if (p.rules & rule::kWholeSticks)
    v -= v % c.chip.stickBytes;
  return v;
}

/// Moves the keys a rule between keys ties to `path` along with it, so that
/// the extreme of one key is tried in a config that is otherwise valid.
void keepRulesBetweenKeys(std::string_view path, HwConfig &c) {
  MemoryConfig &m = c.memory;
  if (path == "memory.peak_gb_per_s") {
    m.sustainedReadGBps = std::min(m.sustainedReadGBps, m.peakGBps);
    m.sustainedMixedGBps = std::min(m.sustainedMixedGBps, m.peakGBps);
  } else if (path == "memory.sustained_read_gb_per_s") {
    m.peakGBps = std::max(m.peakGBps, m.sustainedReadGBps);
    m.sustainedMixedGBps = std::min(m.sustainedMixedGBps, m.sustainedReadGBps);
  } else if (path == "memory.sustained_mixed_gb_per_s") {
    m.sustainedReadGBps = std::max(m.sustainedReadGBps, m.sustainedMixedGBps);
    m.peakGBps = std::max(m.peakGBps, m.sustainedReadGBps);
  } else if (path == "ring.memory_node_position") {
    c.chip.cores = std::max(c.chip.cores, c.ring.memoryNodePosition + 1);
  } else if (path == "chip.cores") {
    c.ring.memoryNodePosition =
        std::min(c.ring.memoryNodePosition, c.chip.cores - 1);
  } else if (path == "lx.size_bytes") {
    c.lx.sizeBytes = std::max<int64_t>(
        c.lx.sizeBytes, int64_t{c.chip.stickBytes} * c.chip.coreletsPerCore);
  } else if (path == "limits.tensor_span_bytes_per_core") {
    m.sizeBytes = std::max(m.sizeBytes, c.limits.tensorSpanBytesPerCore);
  } else if (path == "memory.size_bytes") {
    c.limits.tensorSpanBytesPerCore =
        std::min(c.limits.tensorSpanBytesPerCore, m.sizeBytes);
  } else if (path == "pt.int8_speedup") {
    c.pt.int4Speedup = std::max(c.pt.int4Speedup, c.pt.int8Speedup);
  } else if (path == "pt.int4_speedup") {
    c.pt.int8Speedup = std::min(c.pt.int8Speedup, c.pt.int4Speedup);
  }
}

struct Extreme {
  std::string name; ///< e.g. "pt.pe_rows=1024"
  HwConfig config;
};

std::vector<Extreme> extremes() {
  std::vector<Extreme> out;
  for (const ParamInfo &p : configSchema()) {
    if (p.field.type == ParamType::String)
      continue;
    for (bool low : {true, false}) {
      HwConfig c = builtinConfig();
      ParamValue v;
      if (p.field.type == ParamType::Double)
        v = low ? p.minReal : p.maxReal;
      else
        v = low ? smallestInt(p, c) : largestInt(p, c);
      p.field.set(c, v);
      keepRulesBetweenKeys(p.path, c);
      out.push_back({std::string(p.path) + "=" + formatValue(v), c});
    }
  }
  return out;
}

TEST(ConfigExtremes, EveryRangeHasBothEndsAccepted) {
  for (const Extreme &e : extremes()) {
    DiagnosticEngine diags;
    EXPECT_TRUE(validateConfig(e.config, e.name, diags)) << e.name;
  }
}

/// Ends of ranges at which the model cannot be compiled: too little memory
/// or LX for its tensors, or too few sync counters for the corelets to
/// hand work to each other.
const std::set<std::string> kModelDoesNotFit = {
    "lx.size_bytes=128",
    "memory.size_bytes=128",
    "limits.sync_counters_per_core=1",
    "chip.corelets_per_core=64",
};

// One compile and simulation per end of every range: about 90 runs of a
// small model, timing only (the numbers do not depend on the config).
TEST(ConfigExtremes, ModelRunsAtEveryEndOfEveryRange) {
  const std::string dir = makeTempDir();
  const std::string model = srcPath("examples/models/mlp_block/model.json");
  for (const Extreme &e : extremes()) {
    const std::string path = dir + "/config.yaml";
    std::ofstream(path, std::ios::binary) << toYaml(e.config, false);
    ToolResult r = runSpyre({"run", model, "--config", path, "--timing-only"});
    if (kModelDoesNotFit.count(e.name)) {
      // A valid config the model does not fit: a located error, exit 1.
      EXPECT_EQ(r.exitCode, 1) << e.name << "\n" << r.err;
      EXPECT_NE(firstLine(r.err).find(": error: "), std::string::npos)
          << e.name << "\n" << r.err;
      continue;
    }
    EXPECT_EQ(r.exitCode, 0) << e.name << "\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << e.name;
    // Every figure of the summary is a count or a rate: never negative.
    EXPECT_FALSE(std::regex_search(r.out, std::regex(" -[0-9]"))) << e.name << "\n" << r.out;
  }
}

} // namespace
