// What the trace shows beyond slices (the addresses and work of each
// instruction, flows, counters, the chip process), --trace-window and
// --trace-cores, and `spyre trace summary` / `spyre trace diff` as a user
// runs them: golden summaries of the examples, the same summary from the
// statistics and from the trace, a diff against a run with half the memory
// bandwidth, and the errors for bad input.
#include "SimRun.h"

#include "testlib/Golden.h"
#include "testlib/TraceCheck.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

namespace spyre::test {
namespace {

using nlohmann::json;

/// The X events of a trace, by their `seq`.
std::map<uint64_t, json> slicesBySeq(const json &trace) {
  std::map<uint64_t, json> out;
  for (const json &e : trace.at("traceEvents"))
    if (e.value("ph", "") == "X")
      out[e["args"].at("seq").get<uint64_t>()] = e;
  return out;
}

const json *findSlice(const json &trace, const std::string &name, int64_t pid) {
  for (const json &e : trace.at("traceEvents"))
    if (e.value("ph", "") == "X" && e.value("name", "") == name &&
        e.value("pid", -1) == pid)
      return &e;
  return nullptr;
}

size_t countFlows(const json &trace, const std::string &cat, const std::string &name) {
  size_t n = 0;
  for (const json &e : trace.at("traceEvents"))
    n += e.value("ph", "") == "s" && e.value("cat", "") == cat &&
         e.value("name", "") == name;
  return n;
}

SimRun runExample(const std::string &example, std::vector<std::string> extra = {}) {
  std::string program = assembleExample(example, makeTempDir());
  SimRun run = simulate(program, {.timingOnly = true, .extra = std::move(extra)});
  EXPECT_EQ(run.tool.exitCode, 0) << run.tool.out << run.tool.err;
  return run;
}

// pt_matmul (examples/asm/pt_matmul.s): A is 32 sticks at LX 0x0, B 128
// sticks at LX 0x20, C 32 sticks at LX 0xa0; in device memory A at stick 0,
// B at 0x20, C at 0xa0. A stick is 128 bytes, so stick 0x20 is byte 0x1000.
TEST(SimTrace, SlicesNameAddressesBytesAndWork) {
  SimRun run = runExample("pt_matmul");
  json trace = json::parse(run.traceText);
  const json *mm = findSlice(trace, "mm", 0);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->at("args").at("macs"), 16 * 128 * 64);
  EXPECT_EQ(mm->at("args").at("lx_read"), "[0x0, 0x5000)");
  EXPECT_EQ(mm->at("args").at("lx_write"), "[0x5000, 0x6000)");
  EXPECT_EQ(mm->at("args").at("op"), "matmul");
  std::vector<json> loads;
  for (const json &e : trace["traceEvents"])
    if (e.value("name", "") == "ld")
      loads.push_back(e["args"]);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].at("mem_read"), "[0x0, 0x1000)");
  EXPECT_EQ(loads[0].at("lx_write"), "[0x0, 0x1000)");
  EXPECT_EQ(loads[0].at("bytes"), 32 * 128);
  EXPECT_EQ(loads[1].at("mem_read"), "[0x1000, 0x5000)");
  EXPECT_EQ(loads[1].at("bytes"), 128 * 128);
  const json *st = findSlice(trace, "st", 0);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->at("args").at("mem_write"), "[0x5000, 0x6000)");
  EXPECT_EQ(st->at("args").at("lx_read"), "[0x5000, 0x6000)");
  EXPECT_EQ(st->at("args").at("bytes"), 32 * 128);
  // The PT's wait was released by the load engine's signal, the store's by
  // the PT's: both are flows, and the released slices point at them.
  EXPECT_EQ(countFlows(trace, "sync", "signal"), 2u);
  std::map<uint64_t, json> bySeq = slicesBySeq(trace);
  for (const auto &[seq, e] : bySeq) {
    if (e.value("name", "") != "wait")
      continue;
    ASSERT_TRUE(e["args"].contains("released_by")) << e.dump();
    const json &by = bySeq.at(e["args"]["released_by"].get<uint64_t>());
    EXPECT_EQ(by.value("name", ""), "signal");
    EXPECT_LE(by["args"]["end_cycle"].get<uint64_t>(),
              e["args"]["ready_cycle"].get<uint64_t>());
  }
}

// ring_exchange: each core loads, then its ring engine waits for the load
// (a signal), sends and receives once, signals the store engine, and both
// ring engines meet at a barrier. Every wait blocks before its signal.
TEST(SimTrace, RingExchangeHasItsSyncAndRingFlows) {
  SimRun run = runExample("ring_exchange");
  json trace = json::parse(run.traceText);
  EXPECT_EQ(countFlows(trace, "ring", "transfer"), 2u) << "one per send/recv pair";
  EXPECT_EQ(countFlows(trace, "sync", "signal"), 4u) << "two waits per core";
  // Both sides of a transfer complete together, so the two ring engines
  // reach the barrier at the same cycle: neither released the other.
  EXPECT_EQ(countFlows(trace, "sync", "barrier"), 0u);
  // The chip-wide counters and the LX counter of each core.
  std::set<std::pair<int64_t, std::string>> tracks;
  for (const json &e : trace["traceEvents"])
    if (e.value("ph", "") == "C")
      tracks.insert({e["pid"].get<int64_t>(), e["name"].get<std::string>()});
  EXPECT_TRUE(tracks.count({32, "device memory GB/s"}));
  EXPECT_TRUE(tracks.count({32, "data ring link use"}));
  EXPECT_TRUE(tracks.count({0, "lx written bytes"}));
  EXPECT_TRUE(tracks.count({1, "lx written bytes"}));
  // Each core writes a0/a1 to LX 0x0 (4 sticks) and receives into LX 0x10
  // (4 sticks): 8 sticks = 1024 bytes at the end.
  int64_t last0 = -1;
  for (const json &e : trace["traceEvents"])
    if (e.value("ph", "") == "C" && e.value("name", "") == "lx written bytes" &&
        e["pid"] == 0)
      last0 = e["args"]["bytes"].get<int64_t>();
  EXPECT_EQ(last0, 1024);
}

TEST(SimTrace, CoresAndWindowLimitWhatIsWritten) {
  SimRun full = runExample("ring_exchange");
  SimRun core1 = runExample("ring_exchange", {"--trace-cores", "1"});
  TraceCheckResult c = checkTrace(core1.traceText);
  ASSERT_TRUE(c.ok()) << c.errorText();
  EXPECT_EQ(core1.statsText, full.statsText) << "the stats cover the whole run";
  json t = json::parse(core1.traceText);
  EXPECT_EQ(t["otherData"]["complete"], false);
  for (const json &e : t["traceEvents"]) {
    if (e.value("ph", "") == "X") {
      EXPECT_EQ(e["pid"], 1) << e.dump();
    }
  }
  // Both ring pairs cross cores: with one core shown, neither has two ends.
  EXPECT_EQ(countFlows(t, "ring", "transfer"), 0u);
  EXPECT_EQ(c.processNames.count(0), 0u);
  EXPECT_EQ(c.processNames.at(32), "chip");

  SimRun window = runExample("ring_exchange", {"--trace-window", "150:200"});
  TraceCheckResult w = checkTrace(window.traceText);
  ASSERT_TRUE(w.ok()) << w.errorText();
  json tw = json::parse(window.traceText);
  size_t slices = 0;
  for (const json &e : tw["traceEvents"]) {
    if (e.value("ph", "") == "X") {
      ++slices;
      const json &a = e["args"];
      EXPECT_TRUE(a["start_cycle"].get<uint64_t>() < 200 &&
                  (a["end_cycle"].get<uint64_t>() > 150 ||
                   a["start_cycle"] == a["end_cycle"]))
          << e.dump();
    }
    if (e.value("ph", "") == "C") {
      // Clipped: 150 cycles = 100 ns, 200 cycles = 133 ns at 1.5 GHz.
      EXPECT_GE(perfettoNs(e["ts"].get<double>()), 100) << e.dump();
      EXPECT_LE(perfettoNs(e["ts"].get<double>()), 133) << e.dump();
    }
  }
  EXPECT_GT(slices, 0u);
  EXPECT_LT(slices, w.slices.size() + 1);
  EXPECT_LT(slices, checkTrace(full.traceText).slices.size());
}

TEST(SimTrace, BadTraceLimitsAreUsageErrors) {
  std::string program = assembleExample("ring_exchange", makeTempDir());
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"--trace-window", "5"}, "--trace-window: error: '5' is not START:END in cycles"},
      {{"--trace-window", "9:3"}, "--trace-window: error: '9:3': END must be after START"},
      {{"--trace-window", "a:9"}, "--trace-window: error: 'a:9' is not START:END"},
      {{"--trace-cores", "0,40"},
       "--trace-cores: error: core 40 does not exist (the config has 32 cores)"},
      {{"--trace-cores", "1-a"}, "--trace-cores: error: '1-a' is not a core or a range"},
      {{"--trace-cores", "3-1"}, "--trace-cores: error: '3-1' is not a core or a range"},
  };
  for (const Case &c : cases) {
    SimRun run = simulate(program, {.timingOnly = true, .extra = c.args});
    EXPECT_EQ(run.tool.exitCode, 2) << c.args[1];
    EXPECT_NE(run.tool.err.find(c.message), std::string::npos) << run.tool.err;
  }
  ToolResult r = runSpyre({"sim", program, "--timing-only", "--trace-window", "0:9"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--trace-window: error: limits what --trace writes, but no "
                       "--trace is given"),
            std::string::npos)
      << r.err;
}

// ------------------------------------------------------ spyre trace summary

/// The summary of the example's run, from its statistics and its trace.
struct Summaries {
  std::string fromStats;
  std::string fromTrace;
  SimRun run;
};

Summaries summaries(const std::string &example) {
  Summaries s;
  s.run = runExample(example);
  ToolResult a = runSpyre({"trace", "summary", s.run.dir + "/stats.json"});
  EXPECT_EQ(a.exitCode, 0) << a.err;
  ToolResult b = runSpyre({"trace", "summary", s.run.dir + "/trace.json"});
  EXPECT_EQ(b.exitCode, 0) << b.err;
  s.fromStats = a.out;
  s.fromTrace = b.out;
  return s;
}

TEST(TraceSummary, PtMatmulMatchesGolden) {
  Summaries s = summaries("pt_matmul");
  expectGolden(s.fromStats, "sim/pt_matmul.summary.txt");
  EXPECT_EQ(std::regex_replace(s.fromTrace, std::regex("source    trace"),
                               "source    stats"),
            s.fromStats)
      << "the trace gives the same summary as the statistics";
}

TEST(TraceSummary, RingExchangeMatchesGolden) {
  Summaries s = summaries("ring_exchange");
  expectGolden(s.fromStats, "sim/ring_exchange.summary.txt");
  EXPECT_EQ(std::regex_replace(s.fromTrace, std::regex("source    trace"),
                               "source    stats"),
            s.fromStats);
}

// The critical path of every example covers the run: its segments add up
// to total_cycles and follow each other without gaps.
TEST(TraceSummary, CriticalPathAddsUpToTheTotal) {
  for (const char *example : {"dma_copy", "pt_matmul", "sfu_softmax", "ring_exchange"}) {
    SCOPED_TRACE(example);
    SimRun run = runExample(example);
    const json &path = run.stats.at("critical_path");
    ASSERT_FALSE(path.empty());
    uint64_t sum = 0, at = 0;
    for (const json &seg : path) {
      EXPECT_EQ(seg.at("start_cycle").get<uint64_t>(), at) << seg.dump();
      at = seg.at("end_cycle").get<uint64_t>();
      sum += seg.at("cycles").get<uint64_t>();
    }
    EXPECT_EQ(sum, run.stats.at("total_cycles").get<uint64_t>());
    EXPECT_EQ(at, run.stats.at("total_cycles").get<uint64_t>());
  }
}

TEST(TraceSummary, JsonEnginesAddUp) {
  SimRun run = runExample("ring_exchange");
  ToolResult r = runSpyre({"trace", "summary", "--json", run.dir + "/trace.json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  json j = json::parse(r.out);
  const uint64_t total = j.at("total_cycles").get<uint64_t>();
  EXPECT_EQ(total, 393u) << "tests/golden/sim/ring_exchange.stats.json";
  for (const json &e : j.at("engines")) {
    uint64_t sum = e.at("busy_cycles").get<uint64_t>() + e.at("idle_cycles").get<uint64_t>();
    for (const auto &[reason, cycles] : e.at("stall_cycles").items())
      sum += cycles.get<uint64_t>();
    EXPECT_EQ(sum, total) << e.dump();
  }
  EXPECT_EQ(j.at("critical_path_cycles"), total);
}

// The same program on a card with half the device-memory bandwidth: the
// loads and the store take longer, and the diff says so.
TEST(TraceDiff, NamesTheOpAndEngineThatSlowedDown) {
  std::string dir = makeTempDir();
  std::string yaml = readSource("configs/spyre.yaml");
  for (auto [from, to] : {std::pair{"peak_gb_per_s: 204.8", "peak_gb_per_s: 102.4"},
                          std::pair{"sustained_read_gb_per_s: 150.0",
                                    "sustained_read_gb_per_s: 75.0"},
                          std::pair{"sustained_mixed_gb_per_s: 105.0",
                                    "sustained_mixed_gb_per_s: 52.5"}}) {
    size_t at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    yaml.replace(at, std::string(from).size(), to);
  }
  std::string slowConfig = dir + "/slow.yaml";
  std::ofstream(slowConfig) << yaml;
  SimRun fast = runExample("pt_matmul");
  std::string slowProgram = assembleExample("pt_matmul", makeTempDir(), slowConfig);
  SimRun slow = simulate(slowProgram, {.timingOnly = true,
                                       .extra = {"--config", slowConfig}});
  ASSERT_EQ(slow.tool.exitCode, 0) << slow.tool.err;
  ASSERT_GT(slow.stats.at("total_cycles").get<uint64_t>(),
            fast.stats.at("total_cycles").get<uint64_t>());

  ToolResult r = runSpyre({"trace", "diff", fast.dir + "/stats.json", slow.dir + "/trace.json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("most changed\n  op matmul: span +"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  engine core 0 dma.load: busy +"), std::string::npos) << r.out;

  ToolResult j = runSpyre({"trace", "diff", "--json", fast.dir + "/stats.json",
                           slow.dir + "/stats.json"});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  json d = json::parse(j.out);
  EXPECT_EQ(d.at("most_changed_op"), "matmul");
  EXPECT_EQ(d.at("most_changed_engine"), "core 0 dma.load");
  EXPECT_EQ(d.at("total_cycles_delta").get<int64_t>(),
            slow.stats.at("total_cycles").get<int64_t>() -
                fast.stats.at("total_cycles").get<int64_t>());

  // A run against itself changes nothing.
  ToolResult same = runSpyre({"trace", "diff", fast.dir + "/stats.json",
                              fast.dir + "/trace.json"});
  EXPECT_EQ(same.exitCode, 0);
  EXPECT_NE(same.out.find("most changed: nothing"), std::string::npos) << same.out;
}

TEST(TraceSummary, BadInputIsNamed) {
  std::string dir = makeTempDir();
  auto write = [&](const std::string &name, const std::string &text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  struct Case {
    std::string file;
    std::string message;
  };
  const Case cases[] = {
      {write("broken.json", "{\"total_cycles\": "), "broken.json: error: not valid JSON"},
      {write("other.json", "{\"a\": 1}"),
       "other.json: error: neither a statistics JSON (spyre sim --stats) nor a "
       "trace (spyre sim --trace)"},
      {write("stats.json", R"({"program":"p","total_cycles":5,"clock_ghz":1.5,
"memory":{"peak_gbps":1},"cores":[{"core":0,"engines":[{"engine":"pt.0",
"instructions":1,"busy_cycles":-4}]}]})"),
       "stats.json: error: at 'cores[0].engines[0].busy_cycles': must be a "
       "non-negative integer"},
      {write("reason.json", R"({"program":"p","total_cycles":5,"clock_ghz":1.5,
"memory":{"peak_gbps":1},"cores":[{"core":0,"engines":[{"engine":"pt.0",
"instructions":1,"busy_cycles":4,"idle_cycles":1,"stall_cycles":{"sleep":1}}]}]})"),
       "reason.json: error: at 'cores[0].engines[0].stall_cycles.sleep': unknown "
       "stall reason"},
      {write("foreign.json", R"({"traceEvents":[]})"),
       "foreign.json: error: at 'otherData': missing: not a trace written by spyre sim"},
      {dir + "/missing.json", "missing.json"},
  };
  for (const Case &c : cases) {
    ToolResult r = runSpyre({"trace", "summary", c.file});
    EXPECT_EQ(r.exitCode, 1) << c.file << "\n" << r.out;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  ToolResult usage = runSpyre({"trace"});
  EXPECT_EQ(usage.exitCode, 2) << usage.err;
  ToolResult oneFile = runSpyre({"trace", "diff", cases[0].file});
  EXPECT_EQ(oneFile.exitCode, 2) << oneFile.err;
}

} // namespace
} // namespace spyre::test
