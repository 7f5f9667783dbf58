#include "SimRun.h"

#include "support/Npy.h"
#include "testlib/Golden.h"
#include "testlib/TraceCheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace spyre::test {

using nlohmann::json;

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string simData(const std::string &relative) {
  return srcPath("tests/data/sim/" + relative);
}

std::string assembleExample(const std::string &name, const std::string &dir,
                            const std::string &config) {
  std::string program = dir + "/" + name + ".spyre";
  std::vector<std::string> args = {
      "asm", srcPath("examples/asm/" + name + ".s"), "-o", program};
  if (!config.empty()) {
    args.push_back("--config");
    args.push_back(config);
  }
  ToolResult r = runSpyre(args);
  EXPECT_EQ(r.exitCode, 0) << "spyre asm " << name << ":\n" << r.err;
  return program;
}

std::string assembleText(const std::string &name, const std::string &text,
                         const std::string &dir) {
  std::string source = dir + "/" + name + ".s";
  std::ofstream(source, std::ios::binary) << text;
  std::string program = dir + "/" + name + ".spyre";
  ToolResult r = runSpyre({"asm", source, "-o", program});
  EXPECT_EQ(r.exitCode, 0) << "spyre asm " << name << ":\n" << r.err;
  return program;
}

SimRun simulate(const std::string &program, const SimArgs &args) {
  SimRun run;
  run.dir = makeTempDir();
  std::vector<std::string> cmd = {"sim", program, "--stats",
                                  run.dir + "/stats.json"};
  if (!args.inputs.empty())
    cmd.insert(cmd.end(), {"--inputs", args.inputs});
  if (args.outputs)
    cmd.insert(cmd.end(), {"--outputs", run.outputs()});
  if (args.trace)
    cmd.insert(cmd.end(), {"--trace", run.dir + "/trace.json"});
  if (args.timingOnly)
    cmd.push_back("--timing-only");
  cmd.insert(cmd.end(), args.extra.begin(), args.extra.end());
  run.tool = runSpyre(cmd);
  run.statsText = readBytes(run.dir + "/stats.json");
  if (args.trace)
    run.traceText = readBytes(run.dir + "/trace.json");
  if (!run.statsText.empty())
    run.stats = json::parse(run.statsText, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(run.stats.is_discarded()) << "stats are not valid JSON";
  return run;
}

void expectTraceMatchesStats(const std::string &traceText, const json &stats) {
  ASSERT_FALSE(traceText.empty()) << "no trace written";
  TraceCheckResult check = checkTrace(traceText);
  EXPECT_TRUE(check.ok()) << "the trace breaks the trace-event format:\n"
                          << check.errorText();
  json trace = json::parse(traceText, nullptr, false);
  ASSERT_TRUE(trace.is_object() && trace.contains("traceEvents"));

  const double ghz = stats.at("clock_ghz").get<double>();
  const uint64_t total = stats.at("total_cycles").get<uint64_t>();
  auto us = [&](uint64_t cycles) {
    return static_cast<double>(cycles) / (ghz * 1000.0);
  };
  // Per thread: slices, cycles covered, last end cycle.
  struct ThreadSum {
    uint64_t slices = 0;
    uint64_t cycles = 0;
    uint64_t lastEnd = 0;
    uint64_t busy = 0;
    std::map<std::string, uint64_t> stall;
  };
  ASSERT_TRUE(trace.contains("otherData")) << "no run figures in the trace";
  EXPECT_EQ(trace["otherData"].at("total_cycles"), stats.at("total_cycles"));
  EXPECT_EQ(trace["otherData"].at("program"), stats.at("program"));
  // Counters: device-memory GB/s per window back to bytes.
  const double window = trace["otherData"].at("counter_window_cycles").get<double>();
  double readBytes = 0, writeBytes = 0;
  size_t recvSlices = 0, ringFlows = 0;
  std::map<std::pair<int64_t, int64_t>, ThreadSum> sums;
  std::vector<std::string> instantNames;
  uint64_t slices = 0;
  for (const json &e : trace["traceEvents"]) {
    if (e.value("ph", "") == "i") {
      instantNames.push_back(e.value("name", ""));
      continue;
    }
    if (e.value("ph", "") == "C" && e.value("name", "") == "device memory GB/s") {
      readBytes += e["args"].at("read").get<double>() * window / ghz;
      writeBytes += e["args"].at("write").get<double>() * window / ghz;
      continue;
    }
    if (e.value("ph", "") == "s" && e.value("cat", "") == "ring")
      ++ringFlows;
    if (e.value("ph", "") != "X")
      continue;
    ++slices;
    const json &args = e.at("args");
    auto start = args.at("start_cycle").get<uint64_t>();
    auto end = args.at("end_cycle").get<uint64_t>();
    EXPECT_LE(start, end) << e.dump();
    EXPECT_LE(end, total) << e.dump();
    // Perfetto shows whole nanoseconds: a start may be rounded by half of
    // one, a duration (the difference of two rounded ends) by one.
    EXPECT_NEAR(e.at("ts").get<double>(), us(start), 0.5e-3 + 1e-9) << e.dump();
    EXPECT_NEAR(e.at("dur").get<double>(), us(end - start), 1e-3 + 1e-9)
        << e.dump();
    ThreadSum &s =
        sums[{e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>()}];
    ++s.slices;
    s.cycles += end - start;
    s.lastEnd = std::max(s.lastEnd, end);
    // Each instruction's duration is busy plus its stalls, one reason each.
    uint64_t own = args.at("busy").get<uint64_t>();
    s.busy += own;
    if (args.contains("stall"))
      for (const auto &[reason, cycles] : args["stall"].items()) {
        s.stall[reason] += cycles.get<uint64_t>();
        own += cycles.get<uint64_t>();
      }
    EXPECT_EQ(own, end - start) << "busy + stalls of " << e.dump();
    if (args.contains("ready_cycle")) {
      EXPECT_LE(start, args["ready_cycle"].get<uint64_t>()) << e.dump();
      EXPECT_LE(args["ready_cycle"].get<uint64_t>(), end) << e.dump();
    }
    const std::string name = e.value("name", "");
    recvSlices += name == "recv" || name == "racc";
  }
  // A stream that deadlocked has a slice for the instruction it hangs in,
  // up to the end of the run, counted as sync stall.
  EXPECT_EQ(slices, stats.at("instructions").get<uint64_t>())
      << "one slice per executed instruction";

  size_t engines = 0;
  for (const json &core : stats.at("cores")) {
    const int64_t pid = core.at("core").get<int64_t>();
    EXPECT_EQ(check.processNames[pid], "core " + std::to_string(pid));
    for (const json &engine : core.at("engines")) {
      ++engines;
      const std::string name = engine.at("engine").get<std::string>();
      int64_t tid = -1;
      for (const auto &[thread, threadName] : check.threadNames)
        if (thread.first == pid && threadName == name)
          tid = thread.second;
      ASSERT_GE(tid, 0) << "no thread named " << name << " in process " << pid;
      const ThreadSum &s = sums[{pid, tid}];
      uint64_t stalled = 0;
      for (const auto &[reason, cycles] : engine.at("stall_cycles").items())
        stalled += cycles.get<uint64_t>();
      const auto busy = engine.at("busy_cycles").get<uint64_t>();
      EXPECT_EQ(s.slices, engine.at("instructions").get<uint64_t>())
          << "core " << pid << " " << name;
      EXPECT_EQ(s.cycles, busy + stalled)
          << "core " << pid << " " << name
          << ": slices must cover exactly the busy and stalled cycles";
      EXPECT_EQ(total - s.lastEnd, engine.at("idle_cycles").get<uint64_t>())
          << "core " << pid << " " << name
          << ": idle is the time after the engine's last instruction";
      EXPECT_EQ(s.busy, busy) << "core " << pid << " " << name;
      for (const auto &[reason, cycles] : engine.at("stall_cycles").items())
        EXPECT_EQ(s.stall.count(reason) ? s.stall.at(reason) : 0,
                  cycles.get<uint64_t>())
            << "core " << pid << " " << name << " stall " << reason;
    }
  }
  EXPECT_EQ(engines, check.threadNames.size())
      << "one thread per engine stream";
  const int64_t chipPid = static_cast<int64_t>(check.processNames.size()) > 0
                              ? check.processNames.rbegin()->first
                              : -1;
  EXPECT_EQ(check.processNames[chipPid], "chip") << "the chip process";
  EXPECT_EQ(ringFlows, recvSlices) << "one flow per send -> receive pair";
  // The %.6g rates give the bytes back to a few parts per million.
  EXPECT_NEAR(readBytes, stats.at("dram_read_bytes").get<double>(),
              1e-5 * readBytes + 1e-6);
  EXPECT_NEAR(writeBytes, stats.at("dram_write_bytes").get<double>(),
              1e-5 * writeBytes + 1e-6);

  std::vector<std::string> findingKinds;
  for (const json &f : stats.at("findings"))
    findingKinds.push_back(f.at("kind").get<std::string>());
  EXPECT_EQ(instantNames, findingKinds) << "one instant event per finding";
}

std::vector<float> readF32(const std::string &path,
                           const std::vector<int64_t> &shape) {
  NpyArray a = readNpy(path);
  EXPECT_EQ(a.dtype, NpyDtype::F32) << path;
  EXPECT_EQ(a.shape, shape) << path;
  if (a.dtype != NpyDtype::F32)
    return {};
  return npyF32Values(a, path);
}

} // namespace spyre::test
