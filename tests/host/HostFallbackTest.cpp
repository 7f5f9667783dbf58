// Host fallback end to end: ONNX models with an op the device does not run
// between device ops (tests/data/onnx-host, scripts/gen_host_models.py) run
// through `spyre run --check`; the host time in the statistics follows the
// `host` instruction's formula computed here from the config; the trace
// shows the host process; --no-fallback and --coverage; the program file's
// HOST section round-trips and its bad descriptors are located errors.
#include "testlib/Golden.h"
#include "testlib/RunTool.h"
#include "testlib/TraceCheck.h"

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "run/RunModel.h"
#include "sim/analysis/Summary.h"
#include "support/FileIO.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace spyre {
namespace {

const std::string kDir = "tests/data/onnx-host/";

std::string model(const std::string &name) {
  return test::srcPath(kDir + name + "/model.onnx");
}

/// PCIe transfer in chip cycles: latency + bytes over the link, rounded up.
uint64_t transferCycles(const hw::HwConfig &c, uint64_t bytes) {
  return static_cast<uint64_t>(c.host.pcieLatencyCycles) +
         static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) *
                                         c.chip.clockGhz / c.host.pcieGBps));
}

struct Expect {
  std::string name, opType;
  uint64_t bytesIn, bytesOut, flops;
};

/// Runs `name` in process, checks the numbers, the statistics' host entry
/// against the formula and the trace's host slices.
void runAndCheck(const std::string &name, const Expect &e) {
  const std::string dir = test::makeTempDir();
  run::RunOptions o;
  o.model = model(name);
  o.inputs = test::srcPath(kDir + name + "/inputs");
  o.check = true;
  o.useSystemC = false;
  o.stats = dir + "/stats.json";
  o.trace = dir + "/trace.json";
  run::RunReport r = run::runModel(o);
  ASSERT_TRUE(r.checked);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_TRUE(r.checks[0].result.ok()) << r.checks[0].result.maxAbsDiff;
  EXPECT_TRUE(r.findings.empty()) << r.findings.front();
  EXPECT_EQ(r.exitCode(), 0);
  EXPECT_EQ(r.hostOps, 1u);

  const hw::HwConfig &cfg = hw::builtinConfig();
  const uint64_t pcie =
      transferCycles(cfg, e.bytesIn) + transferCycles(cfg, e.bytesOut);
  const auto compute = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(static_cast<double>(e.flops) *
                                         cfg.chip.clockGhz / cfg.host.hostGflops)));
  nlohmann::json stats = nlohmann::json::parse(readFile(o.stats, kTextFileLimit));
  const nlohmann::json &h = stats.at("host");
  ASSERT_EQ(h.at("ops").size(), 1u);
  const nlohmann::json &op = h.at("ops")[0];
  EXPECT_EQ(op.at("name"), e.name);
  EXPECT_EQ(op.at("op_type"), e.opType);
  EXPECT_EQ(op.at("bytes_to_host"), e.bytesIn);
  EXPECT_EQ(op.at("bytes_from_host"), e.bytesOut);
  EXPECT_EQ(op.at("pcie_cycles"), pcie);
  EXPECT_EQ(op.at("compute_cycles"), compute);
  EXPECT_EQ(h.at("total_cycles"), pcie + compute);
  EXPECT_EQ(r.hostPcieCycles, pcie);
  EXPECT_EQ(r.hostComputeCycles, compute);
  // The host op lies inside the run and takes most of this small one.
  EXPECT_LE(op.at("end_cycle").get<uint64_t>(), stats.at("total_cycles").get<uint64_t>());

  test::TraceCheckResult t = test::checkTrace(readFile(o.trace, kTextFileLimit));
  ASSERT_TRUE(t.ok()) << t.errorText();
  int64_t hostPid = -1;
  for (const auto &[pid, pname] : t.processNames)
    if (pname == "host")
      hostPid = pid;
  ASSERT_GE(hostPid, 0) << "no host process in the trace";
  EXPECT_EQ(t.threadNames.at({hostPid, 0}), "pcie");
  EXPECT_EQ(t.threadNames.at({hostPid, 1}), "cpu");
  int pcieSlices = 0, cpuSlices = 0;
  for (const test::TraceSliceInfo &s : t.slices)
    if (s.pid == hostPid) {
      EXPECT_EQ(s.name, e.name);
      (s.tid == 0 ? pcieSlices : cpuSlices) += 1;
    }
  EXPECT_EQ(pcieSlices, 2);
  EXPECT_EQ(cpuSlices, 1);

  // `spyre trace summary` reads the same host time from either file.
  for (const std::string &file : {o.stats, o.trace}) {
    sim::Summary sum = sim::readSummary(readFile(file, kTextFileLimit), file);
    ASSERT_TRUE(sum.host.has_value()) << file;
    EXPECT_EQ(sum.host->ops, 1u) << file;
    EXPECT_EQ(sum.host->pcie, pcie) << file;
    EXPECT_EQ(sum.host->compute, compute) << file;
    EXPECT_EQ(sum.host->bytesToHost, e.bytesIn) << file;
    EXPECT_EQ(sum.host->bytesFromHost, e.bytesOut) << file;
  }
}

TEST(HostFallback, MatmulSinMatmulRunsThroughTheHostAndMatches) {
  // Sin of [8, 64] DL16: 8 sticks = 1024 bytes each way, 512 flops.
  runAndCheck("matmul_sin", {"sin", "Sin", 1024, 1024, 512});
}

TEST(HostFallback, SliceBetweenMatmulsRunsThroughTheHostAndMatches) {
  // Slice [8, 128] -> [8, 64] DL16: 16 sticks in, 8 out, no flops.
  runAndCheck("matmul_slice", {"slice", "Slice", 2048, 1024, 0});
}

TEST(HostFallback, CliRunShowsTheHostTime) {
  test::ToolResult r =
      test::runSpyre({"run", model("matmul_sin"), "--inputs",
                      test::srcPath(kDir + "matmul_sin/inputs"), "--check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\nhost       3052 cycles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 host op: 3050 PCIe, 2 compute)"), std::string::npos)
      << r.out;

  const std::string dir = test::makeTempDir();
  test::ToolResult t = test::runSpyre({"run", model("matmul_sin"), "--seed",
                                       "1", "--timing-only", "--trace",
                                       dir + "/t.json"});
  ASSERT_EQ(t.exitCode, 0) << t.err;
  test::ToolResult s = test::runSpyre({"trace", "summary", dir + "/t.json"});
  ASSERT_EQ(s.exitCode, 0) << s.err;
  EXPECT_NE(s.out.find("\nhost      3052 cycles, "), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("(1 host op: 3050 PCIe, 2 compute; 1024 bytes to the "
                       "host, 1024 back)"),
            std::string::npos)
      << s.out;
}

TEST(HostFallback, NoFallbackMakesTheNodeAnError) {
  const std::string want =
      ": error: at 'graph.node[1]': node 'sin' (Sin): op type 'Sin' is not "
      "supported (docs/onnx.md lists the supported ops)";
  test::ToolResult r =
      test::runSpyre({"run", model("matmul_sin"), "--seed", "1", "--no-fallback"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  const std::string dir = test::makeTempDir();
  test::ToolResult c = test::runSpyre(
      {"compile", model("matmul_sin"), "-o", dir + "/p.spyre", "--no-fallback"});
  EXPECT_EQ(c.exitCode, 1);
  EXPECT_NE(c.err.find(want), std::string::npos) << c.err;
}

TEST(HostFallback, CoverageListsEveryNode) {
  test::ToolResult ok = test::runSpyre(
      {"compile", "--coverage", kDir + "matmul_slice/model.onnx"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_EQ(ok.err, "");
  test::expectGolden(ok.out, "host/coverage_matmul_slice.txt");
  test::ToolResult bad = test::runSpyre(
      {"compile", "--coverage", kDir + "partly_unsupported.onnx"});
  EXPECT_EQ(bad.exitCode, 1);
  test::expectGolden(bad.out, "host/coverage_partly_unsupported.txt");
  EXPECT_EQ(bad.err, kDir + "partly_unsupported.onnx: error: 1 node runs "
                            "neither on the device nor on the host: node 2 "
                            "'hardmax' (Hardmax)\n");
  // Without the fallback the host node counts as unsupported too.
  test::ToolResult off = test::runSpyre(
      {"compile", "--coverage", "--no-fallback", kDir + "matmul_slice/model.onnx"});
  EXPECT_EQ(off.exitCode, 1);
  EXPECT_NE(off.out.find("slice  Slice    unsupported"), std::string::npos)
      << off.out;
}

/// The program of matmul_slice, compiled by the CLI.
std::string compiled(const std::string &dir) {
  test::ToolResult r = test::runSpyre(
      {"compile", model("matmul_slice"), "-o", dir + "/p.spyre", "--mapping-out",
       dir + "/map.json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return readFile(dir + "/p.spyre", kTextFileLimit);
}

TEST(HostFallback, ProgramWithHostOpRoundTripsThroughDisasmAndAsm) {
  const std::string dir = test::makeTempDir();
  const std::string bytes = compiled(dir);
  // ISA 1.1: the program has a HOST section.
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes[8], 1);
  EXPECT_EQ(bytes[10], 1);
  isa::Program p = isa::readProgram(bytes, "p.spyre");
  ASSERT_EQ(p.hostOps.size(), 1u);
  EXPECT_EQ(p.hostOps[0].opType, "Slice");
  EXPECT_EQ(p.hostOps[0].attrs, R"({"axes":[1],"ends":[96],"starts":[32]})");
  test::ToolResult d = test::runSpyre({"disasm", dir + "/p.spyre", "-o", dir + "/p.s"});
  ASSERT_EQ(d.exitCode, 0) << d.err;
  EXPECT_NE(readFile(dir + "/p.s", kTextFileLimit).find(
                ".host \"slice\" \"Slice\" "
                "\"{\\\"axes\\\":[1],\\\"ends\\\":[96],\\\"starts\\\":[32]}\" "
                "in \"h\" out \"s\" flops 0\n"),
            std::string::npos);
  test::ToolResult a = test::runSpyre({"asm", dir + "/p.s", "-o", dir + "/q.spyre"});
  ASSERT_EQ(a.exitCode, 0) << a.err;
  EXPECT_EQ(readFile(dir + "/q.spyre", kTextFileLimit), bytes);
  // The mapping replays to the same program (the host op has a phase only).
  test::ToolResult m = test::runSpyre({"compile", model("matmul_slice"), "-o",
                                       dir + "/r.spyre", "--mapping-in",
                                       dir + "/map.json"});
  ASSERT_EQ(m.exitCode, 0) << m.err;
  EXPECT_EQ(readFile(dir + "/r.spyre", kTextFileLimit), bytes);
  EXPECT_NE(readFile(dir + "/map.json", kTextFileLimit).find("\"slice\": {\"phase\":"),
            std::string::npos);
}

TEST(HostFallback, BadHostDescriptorsAreLocatedErrors) {
  const std::string dir = test::makeTempDir();
  const isa::Program good = isa::readProgram(compiled(dir), "p.spyre");
  auto readBack = [](const isa::Program &p) -> std::string {
    try {
      isa::readProgram(isa::writeProgram(p), "bad.spyre");
    } catch (const UserError &e) {
      return e.diagnostic().str();
    }
    return "no error";
  };
  isa::Program p = good;
  p.hostOps[0].inputs[0] = 999;
  EXPECT_EQ(readBack(p), "bad.spyre: error: section 'HOST': host op 0 ('slice'): "
                         "tensor index 999 is out of range (" +
                             std::to_string(good.tensors.size()) + " tensors)");
  p = good;
  p.hostOps[0].attrs = "{starts";
  EXPECT_EQ(readBack(p), "bad.spyre: error: section 'HOST': host op 0 ('slice'): "
                         "the attributes are not valid JSON");
  p = good;
  p.hostOps[0].opType = "Nope";
  EXPECT_EQ(readBack(p), "bad.spyre: error: section 'HOST': host op 0 ('slice'): "
                         "op type 'Nope' has no host implementation");
  p = good;
  p.hostOps[0].attrs = R"({"axes":[1],"ends":[80],"starts":[32]})";
  EXPECT_NE(readBack(p).find("output tensor 's' is [8, 64], Slice gives [8, 48]"),
            std::string::npos);
  // A host instruction whose op is not in the section.
  p = good;
  p.hostOps.clear();
  EXPECT_NE(readBack(p).find(": host op 0 does not exist (the program has 0)"),
            std::string::npos)
      << readBack(p);
}

TEST(HostFallback, ProgramsWithoutHostOpsStayIsaOnePointZero) {
  const std::string dir = test::makeTempDir();
  isa::Program p = isa::readProgram(compiled(dir), "p.spyre");
  p.hostOps.clear();
  for (isa::Stream &s : p.streams)
    for (isa::Instr &in : s.code)
      if (in.opcode == isa::Opcode::Host)
        in = isa::Instr{isa::Opcode::Nop, {}, {}};
  const std::string bytes = isa::writeProgram(p);
  EXPECT_EQ(bytes[10], 0);
  EXPECT_EQ(isa::readProgram(bytes, "q.spyre"), p);
}

} // namespace
} // namespace spyre
