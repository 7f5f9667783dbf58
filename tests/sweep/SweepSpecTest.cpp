// The sweep library without running anything: the expression language
// against hand-computed values and with located errors, the expansion order
// of grids, linked entries and point lists, point ids that survive
// reordering the spec, the constraints, the effective config of a point
// against the config parser's own reading of the same change, and the
// result file and CSV formats.
#include "hw/ConfigSchema.h"
#include "hw/HwConfig.h"
#include "support/FileIO.h"
#include "sweep/Expr.h"
#include "sweep/Results.h"
#include "sweep/Sweep.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <sstream>

namespace spyre::sweep {
namespace {

namespace fs = std::filesystem;

double evalWith(const std::string &text,
                const std::map<std::string, double> &values = {}) {
  const Expr e = Expr::parse(text, SourceLoc{"t", 1, 1});
  return e.eval([&](const std::string &name) { return values.at(name); });
}

/// The message and column of the error `text` gives, parsed at column 10.
std::pair<std::string, int> exprError(const std::string &text) {
  try {
    Expr::parse(text, SourceLoc{"spec.yaml", 4, 10});
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().loc.line, 4);
    return {e.diagnostic().message, e.diagnostic().loc.col};
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return {};
}

TEST(SweepExpr, ArithmeticFollowsPrecedence) {
  EXPECT_EQ(evalWith("1 + 2 * 3"), 7);
  EXPECT_EQ(evalWith("(1 + 2) * 3"), 9);
  EXPECT_EQ(evalWith("10 / 4 - 1"), 1.5);
  EXPECT_EQ(evalWith("-2 * -3"), 6);
  EXPECT_EQ(evalWith("2e3 + .5"), 2000.5);
  EXPECT_EQ(evalWith("8 - 2 - 1"), 5); // left to right
}

TEST(SweepExpr, ComparisonsAndLogic) {
  EXPECT_EQ(evalWith("1 < 2 and 2 < 1"), 0);
  EXPECT_EQ(evalWith("1 < 2 or 2 < 1"), 1);
  EXPECT_EQ(evalWith("not 1 == 2"), 1);
  EXPECT_EQ(evalWith("3 >= 3 and 3 <= 3 and 3 != 4"), 1);
  // `and` binds tighter than `or`.
  EXPECT_EQ(evalWith("1 == 1 or 1 == 2 and 1 == 3"), 1);
  EXPECT_EQ(evalWith("1 / 0 > 1e300"), 1);
}

TEST(SweepExpr, NamesAreConfigKeysWithDots) {
  // The example's constraint: 2 MiB x 32 cores is exactly 64 MiB.
  const std::string c = "lx.size_bytes * chip.cores <= 67108864";
  EXPECT_EQ(evalWith(c, {{"lx.size_bytes", 2097152}, {"chip.cores", 32}}), 1);
  EXPECT_EQ(evalWith(c, {{"lx.size_bytes", 4194304}, {"chip.cores", 32}}), 0);
  const Expr e = Expr::parse("a.b + a.b * c", SourceLoc{"t"});
  ASSERT_EQ(e.names().size(), 2u);
  EXPECT_EQ(e.names()[0], "a.b");
  EXPECT_EQ(e.names()[1], "c");
  EXPECT_EQ(e.nameOffset(0), 0u);
  EXPECT_EQ(e.nameOffset(1), 12u);
}

TEST(SweepExpr, ErrorsPointAtTheToken) {
  using Error = std::pair<std::string, int>;
  EXPECT_EQ(exprError("1 +"),
            (Error{"the expression ends early; expected a number, a key name "
                   "or '('",
                   13}));
  EXPECT_EQ(exprError("1 < 2 < 3"),
            (Error{"comparisons do not chain; join them with 'and'", 16}));
  EXPECT_EQ(exprError("(1 + 2"), (Error{"'(' is never closed", 10}));
  EXPECT_EQ(exprError("2 $ 3").second, 12);
  EXPECT_EQ(exprError("3x + 1"), (Error{"malformed number '3x'", 11}));
  EXPECT_EQ(exprError("1 2"), (Error{"unexpected '2' after the expression", 12}));
  EXPECT_EQ(exprError("  "), (Error{"the expression is empty", 12}));
}

std::string repeated(const std::string &part, size_t times) {
  std::string out;
  out.reserve(part.size() * times);
  for (size_t i = 0; i < times; ++i)
    out += part;
  return out;
}

TEST(SweepExpr, NestingIsBoundedWithALocatedError) {
  // At the limit the expression parses and evaluates; one level more is a
  // located error at the token that opens it, whichever kind it is.
  const size_t depth = static_cast<size_t>(Expr::kMaxDepth);
  EXPECT_EQ(evalWith(repeated("(", depth) + "7" + repeated(")", depth)), 7);
  EXPECT_EQ(evalWith(repeated("- ", depth) + "7"), 7); // an even count
  EXPECT_EQ(evalWith(repeated("not ", depth) + "0"), 0);
  const std::string tooDeep =
      "the expression nests deeper than 100 levels (parentheses, unary minus "
      "and 'not' together)";
  using Error = std::pair<std::string, int>;
  EXPECT_EQ(exprError(repeated("(", depth + 1) + "1" + repeated(")", depth + 1)),
            (Error{tooDeep, 10 + static_cast<int>(depth)}));
  EXPECT_EQ(exprError(repeated("-", depth + 1) + "1"),
            (Error{tooDeep, 10 + static_cast<int>(depth)}));
  // Kinds add up: each "not (" opens two levels, so the 51st 'not' is the
  // 101st level.
  EXPECT_EQ(exprError("1 == 1 and " + repeated("not (", 60) + "1" +
                      repeated(")", 60)),
            (Error{tooDeep, 10 + 11 + 5 * 50}));
  // Deep input within the length limit.
  EXPECT_EQ(exprError(repeated("(", 4000) + "1" + repeated(")", 4000)).first,
            tooDeep);
}

TEST(SweepExpr, LengthIsBounded) {
  const std::string tooLong =
      "characters long; at most 10000 are accepted";
  for (const std::string &text :
       {repeated("-", 500000) + "1", repeated("not ", 300000) + "1",
        "1" + repeated(" + 1", 100000)}) {
    const auto [message, col] = exprError(text);
    EXPECT_NE(message.find(tooLong), std::string::npos) << message;
    EXPECT_EQ(col, 10 + static_cast<int>(Expr::kMaxLength));
  }
}

TEST(SweepExpr, LongFlatExpressionsEvaluateWithoutRecursion) {
  // 2,000 terms: a left-leaning chain as deep as it is long, which the
  // evaluation walks in a loop. And/or see both sides, with the same result.
  EXPECT_EQ(evalWith("1" + repeated(" + 1", 1999)), 2000);
  EXPECT_EQ(evalWith("1" + repeated(" * 2", 1000)), std::ldexp(1.0, 1000));
  EXPECT_EQ(evalWith("0" + repeated(" or 0", 1500) + " or 1"), 1);
  EXPECT_EQ(evalWith("0 and 1 / 0"), 0);
  EXPECT_EQ(evalWith("1 or 0 / 0"), 1);
}

/// A spec in a fresh folder; models given by absolute path.
std::string writeSpec(const std::string &text) {
  const std::string dir = test::makeTempDir();
  const std::string path = dir + "/spec.yaml";
  writeFileAtomic(path, text);
  return path;
}

std::string model(const std::string &name) {
  return test::srcPath("examples/models/" + name + "/model.json");
}

std::string settingsText(const SweepPoint &p) {
  std::string out;
  for (const Setting &s : p.settings)
    out += (out.empty() ? "" : " ") + s.key + "=" + hw::formatValue(s.value);
  return out;
}

TEST(SweepPlan, ModelsOutermostThenGridKeysAsWritten) {
  const SweepPlan plan = planSweep(
      writeSpec("models: [" + model("mlp_block") + ", " +
                model("norm_softmax") +
                "]\ngrid:\n  chip.cores: [4, 8]\n  lx.size_bytes: [65536, "
                "131072]\n"),
      "");
  ASSERT_EQ(plan.points.size(), 8u);
  const std::vector<std::string> want = {
      "chip.cores=4 lx.size_bytes=65536", "chip.cores=4 lx.size_bytes=131072",
      "chip.cores=8 lx.size_bytes=65536", "chip.cores=8 lx.size_bytes=131072"};
  for (size_t i = 0; i < plan.points.size(); ++i) {
    EXPECT_EQ(plan.points[i].index, i);
    EXPECT_EQ(settingsText(plan.points[i]), want[i % 4]) << i;
    EXPECT_EQ(plan.points[i].modelPath,
              i < 4 ? model("mlp_block") : model("norm_softmax"));
  }
  ASSERT_EQ(plan.axes.size(), 2u);
  EXPECT_EQ(plan.axes[0].name, "chip.cores");
  EXPECT_EQ(plan.axes[1].values, 2u);
  EXPECT_EQ(plan.columns(),
            (std::vector<std::string>{"chip.cores", "lx.size_bytes",
                                      "opt_level"}));
}

TEST(SweepPlan, IdsSurviveReorderingTheSpec) {
  const SweepPlan a = planSweep(
      writeSpec("models: [" + model("mlp_block") +
                "]\ngrid:\n  chip.cores: [4, 8]\n  lx.size_bytes: [65536, "
                "131072]\n"),
      "");
  const SweepPlan b = planSweep(
      writeSpec("models: [" + model("mlp_block") +
                "]\ngrid:\n  lx.size_bytes: [131072, 65536]\n  chip.cores: "
                "[8, 4]\n"),
      "");
  ASSERT_EQ(a.points.size(), 4u);
  std::map<std::string, std::string> idOf;
  for (const SweepPoint &p : a.points) {
    EXPECT_EQ(p.id.size(), 12u);
    idOf[p.configFingerprint] = p.id;
  }
  EXPECT_EQ(idOf.size(), 4u) << "four distinct configs";
  for (const SweepPoint &p : b.points)
    EXPECT_EQ(idOf[p.configFingerprint], p.id);
  // The index follows the new order: b's first point is a's last.
  EXPECT_EQ(b.points[0].id, a.points[3].id);
}

TEST(SweepPlan, PointConfigIsTheParsersReadingOfTheChange) {
  // The sweep sets keys through the schema; the config parser reading the
  // built-in YAML with the same values changed must give the same config.
  const SweepPlan plan = planSweep(
      writeSpec("models: [" + model("mlp_block") +
                "]\ngrid:\n  memory:\n    - {peak_gb_per_s: 409.6, "
                "sustained_read_gb_per_s: 300.0, sustained_mixed_gb_per_s: "
                "210.0}\n  chip.cores: [16]\n"),
      "");
  ASSERT_EQ(plan.points.size(), 1u);
  const SweepPoint &p = plan.points[0];
  EXPECT_EQ(plan.axes[0].keys,
            (std::vector<std::string>{"memory.peak_gb_per_s",
                                      "memory.sustained_read_gb_per_s",
                                      "memory.sustained_mixed_gb_per_s"}));
  std::string text(hw::builtinConfigText());
  auto replace = [&](const std::string &from, const std::string &to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("peak_gb_per_s: 204.8", "peak_gb_per_s: 409.6");
  replace("sustained_read_gb_per_s: 150.0", "sustained_read_gb_per_s: 300.0");
  replace("sustained_mixed_gb_per_s: 105.0", "sustained_mixed_gb_per_s: 210.0");
  replace("cores: 32", "cores: 16");
  hw::HwConfig parsed;
  DiagnosticEngine diags;
  ASSERT_TRUE(hw::parseConfig(text, "changed.yaml", parsed, diags)) << diags.str();
  EXPECT_EQ(p.configFingerprint, hw::fingerprintString(parsed.fingerprint()));
  EXPECT_EQ(p.config.chip.cores, 16);
  EXPECT_EQ(p.config.memory.sustainedReadGBps, 300.0);
}

TEST(SweepPlan, ConstraintsDropPointsAndKeepIndicesDense) {
  const SweepPlan plan = planSweep(
      writeSpec("models: [" + model("mlp_block") +
                "]\ngrid:\n  chip.cores: [4, 8, 16]\n  lx.size_bytes: [65536, "
                "131072]\nconstraints:\n  - lx.size_bytes * chip.cores <= "
                "524288\n  - \"opt_level == 2\"\n"),
      "");
  // 4 x 64 KiB, 4 x 128 KiB and 8 x 64 KiB fit in 512 KiB; 8 x 128 KiB,
  // 16 x 64 KiB and 16 x 128 KiB do not.
  EXPECT_EQ(plan.gridSize, 6u);
  ASSERT_EQ(plan.points.size(), 3u);
  EXPECT_EQ(settingsText(plan.points[2]), "chip.cores=8 lx.size_bytes=65536");
  EXPECT_EQ(plan.points[2].index, 2u);
  ASSERT_EQ(plan.dropped.size(), 3u);
  EXPECT_EQ(plan.dropped[0].constraint, "lx.size_bytes * chip.cores <= 524288");
  EXPECT_EQ(plan.axes[0].values, 2u) << "cores 4 and 8 remain";
}

TEST(SweepPlan, ListedPointsKeepTheBaseForKeysTheyLeaveOut) {
  const SweepPlan plan = planSweep(
      writeSpec("models: [" + model("mlp_block") +
                "]\noptions: {opt_level: 1}\npoints:\n  - {chip.cores: 8}\n  - "
                "{lx.size_bytes: 1048576, opt_level: 0}\n"),
      "");
  ASSERT_EQ(plan.points.size(), 2u);
  EXPECT_EQ(plan.points[0].config.lx.sizeBytes, 2097152);
  EXPECT_EQ(plan.points[0].optLevel, 1);
  EXPECT_EQ(plan.points[1].config.chip.cores, 32);
  EXPECT_EQ(plan.points[1].optLevel, 0);
  EXPECT_EQ(columnValue(plan.points[1], "chip.cores"), hw::ParamValue(int64_t{32}));
}

TEST(SweepPlan, PointCommandRunsThatPoint) {
  const std::string spec = writeSpec("models: [" + model("mlp_block") +
                                     "]\ngrid: {chip.cores: [4, 8]}\n");
  const SweepPlan plan = planSweep(spec, "out");
  const std::vector<std::string> argv = pointArgv(plan, 1, "/bin/spyre");
  EXPECT_EQ(argv, (std::vector<std::string>{
                      "/bin/spyre", "sweep", spec, "-o",
                      (fs::current_path() / "out").string(), "--point", "1"}));
  EXPECT_EQ(plan.points[1].command[0], currentExecutable());
  EXPECT_EQ(resultPath(plan, plan.points[1]),
            "out/points/" + plan.points[1].id + ".json");
}

/// The message of the UserError planSweep throws for `spec`.
std::string planError(const std::string &spec, uint64_t maxPoints) {
  try {
    planSweep(spec, "", maxPoints);
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().loc.file, spec);
    return e.diagnostic().message;
  }
  ADD_FAILURE() << "no error for " << spec;
  return "";
}

TEST(SweepPlan, PointsAreCountedBeforeTheyAreExpanded) {
  // 10^9 points: refused at once, without expanding (the test would run out
  // of memory otherwise).
  std::string values;
  for (int i = 0; i < 1000; ++i)
    values += (i ? ", " : "") + std::to_string(65536 + 128 * i);
  std::string grid = "  lx.size_bytes: [" + values + "]\n";
  grid += "  memory.size_bytes: [" + values + "]\n";
  grid += "  memory.latency_cycles: [" + values + "]\n";
  const std::string spec =
      writeSpec("models: [" + model("mlp_block") + "]\ngrid:\n" + grid);
  EXPECT_EQ(planError(spec, kDefaultMaxPoints),
            "the spec expands to 1000000000 points (1 x 1000 x 1000 x 1000, "
            "models first, before the constraints); at most 100000 are "
            "expanded: split the sweep, or raise the limit with --max-points "
            "N");
  // A product beyond 64 bits is counted without wrapping around.
  std::string huge = "models: [" + model("mlp_block") + "]\ngrid:\n";
  const std::vector<std::string> keys = {
      "lx.size_bytes",         "memory.size_bytes",
      "memory.latency_cycles", "ring.hop_latency_cycles",
      "pt.setup_cycles",       "dma.issue_latency_cycles",
      "sequencer.ctrl_cycles"};
  for (const std::string &key : keys)
    huge += "  " + key + ": [" + values + "]\n";
  EXPECT_NE(planError(writeSpec(huge), UINT64_MAX)
                .find("the spec expands to more than 2^64 points (1 x 1000 x "),
            std::string::npos);

  // The limit is inclusive, and counts models and listed points too.
  const std::string four =
      writeSpec("models: [" + model("mlp_block") + ", " + model("norm_softmax") +
                "]\ngrid: {chip.cores: [4, 8]}\n");
  EXPECT_EQ(planSweep(four, "", 4).points.size(), 4u);
  EXPECT_NE(planError(four, 3).find("expands to 4 points (2 x 2,"),
            std::string::npos);
  const std::string listed = writeSpec(
      "models: [" + model("mlp_block") +
      "]\npoints:\n  - {chip.cores: 4}\n  - {chip.cores: 8}\n");
  EXPECT_NE(planError(listed, 1).find("expands to 2 points (1 x 2,"),
            std::string::npos);
}

TEST(SweepPlan, ARaisedLimitReachesThePointCommands) {
  const std::string spec = writeSpec("models: [" + model("mlp_block") +
                                     "]\ngrid: {chip.cores: [4, 8]}\n");
  const SweepPlan plan = planSweep(spec, "out", 7);
  EXPECT_EQ(plan.maxPoints, 7u);
  const std::vector<std::string> argv = pointArgv(plan, 1, "/bin/spyre");
  EXPECT_EQ(argv, (std::vector<std::string>{
                      "/bin/spyre", "sweep", spec, "-o",
                      (fs::current_path() / "out").string(), "--max-points",
                      "7", "--point", "1"}));
}

TEST(SweepPlan, SettingsApplyUnderThePointsAndReachThePointCommands) {
  const std::string spec = writeSpec("models: [" + model("mlp_block") +
                                     "]\ngrid: {chip.cores: [4, 8]}\n");
  const std::vector<std::string> settings = {"memory.peak_gb_per_s=409.6",
                                             "chip.cores=16"};
  const SweepPlan plan = planSweep(spec, "out", kDefaultMaxPoints, settings);
  EXPECT_EQ(plan.baseSettings, settings);
  // The settings change the base; the points' own values apply over it.
  for (const SweepPoint &p : plan.points)
    EXPECT_EQ(p.config.memory.peakGBps, 409.6);
  EXPECT_EQ(plan.points[0].config.chip.cores, 4);
  EXPECT_EQ(plan.points[1].config.chip.cores, 8);
  const SweepPlan plain = planSweep(spec, "out");
  EXPECT_NE(plan.points[0].configFingerprint, plain.points[0].configFingerprint);
  const std::vector<std::string> argv = pointArgv(plan, 1, "/bin/spyre");
  EXPECT_EQ(argv, (std::vector<std::string>{
                      "/bin/spyre", "sweep", spec, "-o",
                      (fs::current_path() / "out").string(), "--set",
                      "memory.peak_gb_per_s=409.6", "--set", "chip.cores=16",
                      "--point", "1"}));
  EXPECT_NE(dryRunText(plan).find(
                "config     the built-in config with --set "
                "memory.peak_gb_per_s=409.6 --set chip.cores=16, timing only"),
            std::string::npos)
      << dryRunText(plan);
}

TEST(SweepPlan, ABadSettingIsAUsageErrorNamingIt) {
  const std::string spec = writeSpec("models: [" + model("mlp_block") +
                                     "]\ngrid: {chip.cores: [4, 8]}\n");
  try {
    planSweep(spec, "out", kDefaultMaxPoints, {"lx.size_bytes=100"});
    ADD_FAILURE() << "no error";
  } catch (const UserError &e) {
    EXPECT_EQ(e.exitCode(), ExitCode::Usage);
    EXPECT_EQ(e.diagnostic().str(),
              "--set lx.size_bytes=100: error: at 'lx.size_bytes': 100 is not "
              "a whole number of 128-byte sticks");
  }
}

TEST(SweepLocal, APointProcessThatDiesWithoutAResultIsAFailedPoint) {
  // Points run by a stand-in that aborts: each ends by SIGABRT, without a
  // result; the runner records each as failed and goes on with the others.
  const std::string dir = test::makeTempDir();
  const std::string crash = dir + "/crash.sh";
  writeFileAtomic(crash, "#!/bin/sh\necho 'about to crash' >&2\nkill -ABRT $$\n");
  fs::permissions(crash, fs::perms::owner_all);
  const SweepPlan plan =
      planSweep(writeSpec("models: [" + model("mlp_block") +
                          "]\ngrid: {chip.cores: [4, 8, 16]}\n"),
                dir + "/out");
  SweepRunOptions options;
  options.jobs = 2;
  options.spyreExe = crash;
  std::ostringstream out, progress;
  EXPECT_EQ(runLocal(plan, options, out, progress), 3);
  for (const SweepPoint &p : plan.points) {
    std::optional<PointResult> r = readResult(plan, p);
    ASSERT_TRUE(r) << p.index;
    EXPECT_FALSE(r->ok);
    EXPECT_EQ(r->error, "the point's process was killed by signal 6 "
                        "(Aborted) without writing its result: about to "
                        "crash");
  }
  EXPECT_NE(progress.str().find("[3/3] 0 running, 3 failed, eta "),
            std::string::npos)
      << progress.str();
}

TEST(SweepResults, JsonRoundTrip) {
  PointResult r;
  r.index = 3;
  r.id = "0123456789ab";
  r.model = "m.json";
  r.modelHash = "0x1";
  r.parameters = {{"chip.cores", hw::ParamValue(int64_t{8})},
                  {"memory.peak_gb_per_s", hw::ParamValue(204.8)}};
  r.configFingerprint = "0x2";
  r.ok = true;
  r.cycles = 41651;
  r.clockGhz = 1.5;
  r.simulatedUs = 27.767333333333333;
  r.utilization = {0.5, 0.25, 0.125, 0, 1};
  r.firstFindings = {"a finding"};
  r.findings = 4;
  r.wallSeconds = 0.25;
  const std::optional<PointResult> back = parseResult(resultJson(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(resultJson(*back), resultJson(r));
  EXPECT_EQ(back->parameters[1].value, hw::ParamValue(204.8));
  EXPECT_FALSE(parseResult("{\"index\": 1}"));
  EXPECT_FALSE(parseResult("not json"));
}

TEST(SweepResults, CsvFieldsAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(csvField("plain"), "plain");
  EXPECT_EQ(csvField("a,b"), "\"a,b\"");
  EXPECT_EQ(csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvField("two\nlines"), "\"two\nlines\"");
}

TEST(SweepResults, TableIsTheCsvTyped) {
  const SweepPlan plan = planSweep(
      writeSpec("models: [" + model("mlp_block") +
                "]\ngrid:\n  chip.clock_ghz: [1.5, 2.0]\n  name: [a, b]\n"),
      "");
  ASSERT_EQ(plan.points.size(), 4u);
  PointResult ok = resultFor(plan, plan.points[0]);
  ok.ok = true;
  ok.cycles = 41651;
  ok.simulatedUs = 27.767333333333333;
  ok.check = "ok";
  ok.compileSeconds = 0.25;
  PointResult failed = resultFor(plan, plan.points[1]);
  failed.error = "t.yaml: error: no, it fails";
  const std::map<size_t, PointResult> results = {{0, ok}, {1, failed}};
  const ResultsTable table = resultsTable(plan, results);

  // The CSV is the table's text, field by field.
  std::string csv;
  for (size_t i = 0; i < table.header.size(); ++i)
    csv += (i ? "," : "") + csvField(table.header[i]);
  csv += "\n";
  for (const std::vector<ResultField> &row : table.rows) {
    ASSERT_EQ(row.size(), table.header.size());
    for (size_t i = 0; i < row.size(); ++i)
      csv += (i ? "," : "") + csvField(row[i].text);
    csv += "\n";
  }
  EXPECT_EQ(csv, resultsCsv(plan, results));

  auto field = [&](size_t row, const std::string &column) {
    const auto it =
        std::find(table.header.begin(), table.header.end(), column);
    EXPECT_NE(it, table.header.end()) << column;
    return table.rows[row][static_cast<size_t>(it - table.header.begin())];
  };
  EXPECT_EQ(field(0, "index").value, hw::ParamValue(int64_t{0}));
  EXPECT_EQ(field(0, "chip.clock_ghz").value, hw::ParamValue(1.5));
  EXPECT_EQ(field(0, "chip.clock_ghz").text, "1.5");
  EXPECT_EQ(field(3, "name").value, hw::ParamValue(std::string("b")));
  EXPECT_EQ(field(0, "cycles").value, hw::ParamValue(int64_t{41651}));
  EXPECT_EQ(field(0, "simulated_us").value, hw::ParamValue(27.767333333333333));
  EXPECT_EQ(field(0, "compile_s").text, "0.250");
  EXPECT_EQ(field(0, "compile_s").value, hw::ParamValue(0.25));
  EXPECT_FALSE(field(0, "error").value);
  EXPECT_EQ(field(1, "status").value, hw::ParamValue(std::string("error")));
  EXPECT_FALSE(field(1, "cycles").value);
  EXPECT_EQ(field(1, "error").value,
            hw::ParamValue(std::string("t.yaml: error: no, it fails")));
  EXPECT_EQ(field(2, "status").text, "missing");
  EXPECT_FALSE(field(2, "wall_s").value);
}

} // namespace
} // namespace spyre::sweep
