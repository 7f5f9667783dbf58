// `spyre sweep` as a user runs it: the dry-run listing (golden), each bad
// spec with its located message and exit code, a real sweep whose every
// point agrees with `spyre run --timing-only` on the point's own config,
// failing points that do not stop the others, a sweep stopped by SIGTERM
// and resumed (only the missing points run), --point and --aggregate (what
// the Slurm backend's tasks run), and the report (golden table, one chart
// per swept parameter, the Pareto front checked against the CSV).
#include "Csv.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace spyre {
namespace {

namespace fs = std::filesystem;
using test::firstLine;
using test::runSpyre;
using test::srcPath;
using test::ToolResult;
using test::csvRecords;
using test::readCsv;
using test::withoutWallClock;

const char *const kSmall = "tests/sweep/data/small.yaml";
const char *const kFailing = "tests/sweep/data/failing.yaml";
const char *const kResume = "tests/sweep/data/resume.yaml";

std::string all(const ToolResult &r) {
  return "exit " + std::to_string(r.exitCode) + "\nstdout:\n" + r.out +
         "\nstderr:\n" + r.err;
}

std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

size_t resultFiles(const std::string &dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir + "/points", ec))
    n += e.path().extension() == ".json" ? 1 : 0;
  return n;
}

// ------------------------------------------------------------ dry run

TEST(SweepCli, DryRunListsPointsInExpansionOrder) {
  ToolResult r = runSpyre({"sweep", "tests/sweep/data/expand.yaml", "--dry-run"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(r.err, "");
  test::expectGolden(r.out, "sweep/expand-dry-run.txt");
}

TEST(SweepCli, DryRunOfAPointsList) {
  ToolResult r = runSpyre({"sweep", "tests/sweep/data/listed.yaml", "--dry-run"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  test::expectGolden(r.out, "sweep/listed-dry-run.txt");
}

// ------------------------------------------------------------ bad specs

struct BadSpec {
  const char *name;
  std::string yaml; ///< MODEL stands for a model's absolute path
  std::string error; ///< the first line of stderr
};

TEST(SweepCli, BadSpecsAreLocatedErrors) {
  const std::string model = srcPath("examples/models/mlp_block/model.json");
  const std::vector<BadSpec> cases = {
      {"unknown config key",
       "models: [MODEL]\ngrid:\n  lx.size: [65536]\n",
       "spec.yaml:3:3: error: unknown config key 'lx.size'; did you mean "
       "'lx.size_bytes'? (keys as `spyre config show` prints them, e.g. "
       "lx.size_bytes; or opt_level, mapping)"},
      {"wrong type",
       "models: [MODEL]\ngrid:\n  chip.cores: [8, 8.5]\n",
       "spec.yaml:3:19: error: 'chip.cores' takes an integer, got 8.5"},
      {"quoted number",
       "models: [MODEL]\ngrid:\n  memory.peak_gb_per_s: [\"204.8\"]\n",
       "spec.yaml:3:26: error: 'memory.peak_gb_per_s' takes a number, got the "
       "quoted string '204.8'"},
      {"missing models", "grid:\n  chip.cores: [8]\n",
       "spec.yaml:1:1: error: the sweep spec names no models: add 'models:' "
       "with a list of model files"},
      {"model not found", "models: [nowhere.onnx]\n",
       "spec.yaml:1:10: error: model file 'nowhere.onnx' not found (looked for "
       "DIR/nowhere.onnx; paths are relative to the spec's folder)"},
      {"empty grid", "models: [MODEL]\ngrid: {}\n",
       "spec.yaml:2:7: error: the grid is empty; give at least one key with "
       "its values"},
      {"empty values", "models: [MODEL]\ngrid:\n  chip.cores: []\n",
       "spec.yaml:3:15: error: 'chip.cores' has no values; an empty list "
       "gives no points"},
      {"duplicate value", "models: [MODEL]\ngrid:\n  chip.cores: [8, 4, 8]\n",
       "spec.yaml:3:22: error: 'chip.cores' lists this value twice (also at "
       "spec.yaml:3:16)"},
      {"key set twice",
       "models: [MODEL]\ngrid:\n  chip.cores: [8]\n  chip:\n    - {cores: 4}\n",
       "spec.yaml:4:3: error: 'chip.cores' is set by two entries ('chip.cores' "
       "and 'chip')"},
      {"unknown key in a section",
       "models: [MODEL]\ngrid:\n  memory:\n    - {peak_gbps: 300.0}\n",
       "spec.yaml:4:8: error: unknown config key 'memory.peak_gbps'; did you "
       "mean 'peak_gb_per_s'?"},
      {"linked values of other keys",
       "models: [MODEL]\ngrid:\n  memory:\n    - {peak_gb_per_s: 300.0}\n    - "
       "{sustained_read_gb_per_s: 100.0}\n",
       "spec.yaml:5:7: error: each value of 'memory' must set the same keys, in "
       "the same order, as the first"},
      {"bad -O", "models: [MODEL]\ngrid:\n  opt_level: [2, 3]\n",
       "spec.yaml:3:18: error: opt_level is 0, 1 or 2, got '3'"},
      {"constraint syntax",
       "models: [MODEL]\ngrid:\n  chip.cores: [8]\nconstraints:\n  - "
       "lx.size_bytes * <= 4\n",
       "spec.yaml:5:21: error: expected a number, a key name or '(', got '<='"},
      {"quoted constraint",
       "models: [MODEL]\ngrid:\n  chip.cores: [8]\nconstraints:\n  - "
       "\"chip.cores > (2\"\n",
       "spec.yaml:5:19: error: '(' is never closed"},
      {"unknown name in a constraint",
       "models: [MODEL]\ngrid:\n  chip.cores: [8]\nconstraints:\n  - "
       "chip.cores * lx.sizebytes < 4\n",
       "spec.yaml:5:18: error: unknown name 'lx.sizebytes' in the constraint; "
       "did you mean 'lx.size_bytes'? (names are config keys such as "
       "lx.size_bytes, or opt_level)"},
      {"every point dropped",
       "models: [MODEL]\ngrid:\n  chip.cores: [8, 16]\nconstraints:\n  - "
       "chip.cores < 4\n",
       "spec.yaml: error: the constraints drop all 2 points; nothing would "
       "run"},
      {"unknown top-level key", "models: [MODEL]\ngrids:\n  chip.cores: [8]\n",
       "spec.yaml:2:1: error: unknown key 'grids' in the sweep spec; did you "
       "mean 'grid'? (keys: models, base_config, options, serve, grid, "
       "points, constraints)"},
      {"grid and points",
       "models: [MODEL]\ngrid: {chip.cores: [8]}\npoints: [{chip.cores: 4}]\n",
       "spec.yaml:3:9: error: give either 'grid' or 'points', not both"},
      {"YAML syntax", "models: [MODEL\ngrid: {\n",
       "spec.yaml:2:5: error: YAML syntax error: end of sequence flow not "
       "found"},
      {"not a map", "- models\n",
       "spec.yaml:1:1: error: a sweep spec is a map (models, base_config, "
       "options, grid or points, constraints), got a list"},
  };
  for (const BadSpec &c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = test::makeTempDir();
    writeFileAtomic(dir + "/spec.yaml", replaceAll(c.yaml, "MODEL", model));
    ToolResult r = runSpyre({"sweep", "spec.yaml", "-o", "out"}, dir);
    EXPECT_EQ(r.exitCode, 1) << all(r);
    EXPECT_EQ(firstLine(r.err), replaceAll(c.error, "DIR", dir));
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(dir + "/out")) << "nothing may run";
  }
}

TEST(SweepCli, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"sweep", kSmall},
       "spyre sweep: error: -o DIR is required: the folder for the results "
       "(or --dry-run to list the points)"},
      {{"sweep", "-o", "out"},
       "spyre sweep: error: a sweep spec is required: spyre sweep SPEC -o DIR "
       "(or spyre sweep report DIR)"},
      {{"sweep", kSmall, "-o", "out", "--submit"},
       "--submit: error: submits a Slurm job array; it needs --backend slurm"},
      {{"sweep", kSmall, "-o", "out", "--point", "6"},
       "--point: error: point 6 does not exist: the spec expands to 6 points "
       "(0 to 5)"},
      {{"sweep", kSmall, "-o", "out", "-j", "0"},
       "spyre: error: --jobs: '0' is outside 1..1024"},
      {{"sweep", kSmall, "-o", "out", "--point", "1", "--aggregate"},
       "spyre: error: --point excludes --aggregate"},
  };
  for (const Case &c : cases) {
    const std::string dir = test::makeTempDir();
    std::vector<std::string> args = c.args;
    for (std::string &a : args)
      if (a == kSmall)
        a = srcPath(kSmall);
    ToolResult r = runSpyre(args, dir);
    EXPECT_EQ(r.exitCode, 2) << all(r);
    EXPECT_EQ(firstLine(r.err), c.error);
    EXPECT_FALSE(fs::exists(dir + "/out"));
  }
}

TEST(SweepCli, AnOutputFolderThatIsAFileIsBadInput) {
  const std::string tmp = test::makeTempDir();
  writeFileAtomic(tmp + "/taken", "a file\n");
  ToolResult run = runSpyre({"sweep", srcPath(kSmall), "-o", "taken"}, tmp);
  EXPECT_EQ(run.exitCode, 1) << all(run);
  EXPECT_EQ(firstLine(run.err),
            "taken: error: the output folder is a file, not a folder");
  ToolResult point =
      runSpyre({"sweep", srcPath(kSmall), "-o", "taken", "--point", "0"}, tmp);
  EXPECT_EQ(point.exitCode, 1) << all(point);
  EXPECT_EQ(firstLine(point.err).rfind("taken/points/", 0), 0u) << point.err;
  EXPECT_EQ(readFile(tmp + "/taken", kTextFileLimit), "a file\n");
}

// ------------------------------------------------------------ running

/// `cycles     N (...)` and the device-memory bytes of a `spyre run` summary.
struct RunFigures {
  std::string cycles, readBytes, writeBytes;
};

RunFigures runFigures(const std::string &summary) {
  RunFigures f;
  std::istringstream in(summary);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "cycles")
      words >> f.cycles;
    if (key == "memory") {
      // memory     X GB/s device memory (R bytes read, W bytes written)
      const size_t open = line.find('(');
      std::istringstream bytes(line.substr(open + 1));
      std::string unit, word;
      bytes >> f.readBytes >> unit >> word >> f.writeBytes;
    }
  }
  return f;
}

TEST(SweepCli, EveryPointAgreesWithSpyreRunOnItsConfig) {
  const std::string out = test::makeTempDir() + "/out";
  ToolResult r = runSpyre({"sweep", kSmall, "-o", out, "-j", "2"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(r.out, "sweep      tests/sweep/data/small.yaml: 6 points, 6 ok, 0 "
                   "failed, 0 missing\nresults    " +
                       out + "/results.csv\n");
  EXPECT_NE(r.err.find("sweep: 6 points, 0 already finished, 6 to run with "
                       "-j 2\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("[6/6] 0 running, 0 failed, eta "), std::string::npos)
      << r.err;

  const auto records = csvRecords(out + "/results.csv");
  ASSERT_EQ(records.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> grid = {
      {"1", "16384"}, {"1", "32768"}, {"2", "16384"},
      {"2", "32768"}, {"4", "16384"}, {"4", "32768"}};
  for (size_t i = 0; i < records.size(); ++i) {
    const auto &rec = records[i];
    SCOPED_TRACE("point " + std::to_string(i));
    EXPECT_EQ(rec.at("index"), std::to_string(i));
    EXPECT_EQ(rec.at("chip.cores"), grid[i].first);
    EXPECT_EQ(rec.at("lx.size_bytes"), grid[i].second);
    EXPECT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("findings"), "0");
    // The independent check: `spyre run` on the config the point wrote.
    const std::string config =
        out + "/points/" + rec.at("id") + "/config.yaml";
    ToolResult run = runSpyre({"run", "examples/models/norm_softmax/model.json",
                               "--timing-only", "--config", config});
    ASSERT_EQ(run.exitCode, 0) << all(run);
    const RunFigures f = runFigures(run.out);
    EXPECT_EQ(rec.at("cycles"), f.cycles);
    EXPECT_EQ(rec.at("read_bytes"), f.readBytes);
    EXPECT_EQ(rec.at("write_bytes"), f.writeBytes);
    ToolResult fp = runSpyre({"config", "fingerprint", "--config", config});
    EXPECT_EQ(rec.at("config_fingerprint") + "\n", fp.out) << all(fp);
  }
  // Fewer cores are slower on this model (2444 vs 2055 cycles at 32 KiB).
  EXPECT_GT(std::stoi(records[1].at("cycles")), std::stoi(records[5].at("cycles")));

  // Run again: nothing left to run, the same file.
  const std::string csv = readFile(out + "/results.csv", kTextFileLimit);
  ToolResult again = runSpyre({"sweep", kSmall, "-o", out, "-j", "2"});
  ASSERT_EQ(again.exitCode, 0) << all(again);
  EXPECT_EQ(firstLine(again.err),
            "sweep: 6 points, 6 already finished, 0 to run with -j 2");
  EXPECT_EQ(readFile(out + "/results.csv", kTextFileLimit), csv);

  // A fresh sweep gives the same results but for the wall-clock columns.
  const std::string other = test::makeTempDir() + "/out";
  ToolResult fresh = runSpyre({"sweep", kSmall, "-o", other, "-j", "1"});
  ASSERT_EQ(fresh.exitCode, 0) << all(fresh);
  EXPECT_EQ(withoutWallClock(other + "/results.csv"),
            withoutWallClock(out + "/results.csv"));
}

TEST(SweepCli, NumericsAndMappingFilesAreWhatTheSpecAsks) {
  // A mapping file from -O0, replayed by the sweep and by `spyre compile
  // --mapping-in`; the sweep also simulates the numbers and checks them.
  const std::string tmp = test::makeTempDir();
  const std::string model = srcPath("examples/models/mlp_block/model.json");
  ASSERT_EQ(runSpyre({"compile", model, "-O0", "-o", "o0.spyre",
                      "--mapping-out", "o0.json"},
                     tmp)
                .exitCode,
            0);
  ASSERT_EQ(runSpyre({"compile", model, "-o", "replayed.spyre",
                      "--mapping-in", "o0.json"},
                     tmp)
                .exitCode,
            0);
  ToolResult sim = runSpyre({"sim", "replayed.spyre", "--timing-only"}, tmp);
  ASSERT_EQ(sim.exitCode, 0) << all(sim);
  std::string replayedCycles;
  std::istringstream(sim.out.substr(sim.out.find("\ncycles") + 1)) >>
      replayedCycles >> replayedCycles;
  ToolResult run = runSpyre({"run", model, "--seed", "3", "--check"});
  ASSERT_EQ(run.exitCode, 0) << all(run);

  writeFileAtomic(tmp + "/spec.yaml",
                  "models: [" + model +
                      "]\noptions: {numerics: true, seed: 3}\ngrid:\n  "
                      "mapping: [o0.json]\n  opt_level: [2]\n");
  ToolResult mapped = runSpyre({"sweep", "spec.yaml", "-o", "mapped"}, tmp);
  ASSERT_EQ(mapped.exitCode, 0) << all(mapped);
  writeFileAtomic(tmp + "/plain.yaml",
                  "models: [" + model + "]\noptions: {numerics: true, seed: 3}\n");
  ToolResult plain = runSpyre({"sweep", "plain.yaml", "-o", "plain"}, tmp);
  ASSERT_EQ(plain.exitCode, 0) << all(plain);

  const auto m = csvRecords(tmp + "/mapped/results.csv");
  const auto p = csvRecords(tmp + "/plain/results.csv");
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(m[0].at("mapping"), "o0.json");
  EXPECT_EQ(m[0].at("cycles"), replayedCycles);
  EXPECT_EQ(m[0].at("check"), "ok");
  EXPECT_EQ(p[0].at("check"), "ok");
  EXPECT_EQ(p[0].at("cycles"), runFigures(run.out).cycles);
  EXPECT_NE(m[0].at("cycles"), p[0].at("cycles")) << "the mapping matters";
}

TEST(SweepCli, FailedPointsDoNotStopTheOthers) {
  const std::string out = test::makeTempDir() + "/out";
  ToolResult r = runSpyre({"sweep", kFailing, "-o", out, "-j", "2"});
  ASSERT_EQ(r.exitCode, 3) << all(r);
  const auto records = csvRecords(out + "/results.csv");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].at("status"), "error");
  EXPECT_EQ(records[1].at("status"), "error");
  EXPECT_EQ(records[2].at("status"), "ok");
  EXPECT_EQ(records[1].at("cycles"), "");
  const std::string compileError =
      srcPath("examples/models/mlp_block/model.json") +
      ": error: at 'ops[0]': op 'fc1' (matmul): no matmul tiling fits 64 LX "
      "sticks (the smallest tiles need more)";
  const std::string configError =
      "points/" + records[1].at("id") +
      "/config.yaml: error: at 'lx.size_bytes': 100000 is not a whole number "
      "of 128-byte sticks";
  EXPECT_EQ(records[0].at("error"), compileError);
  EXPECT_EQ(records[1].at("error"), configError);
  EXPECT_EQ(r.out, "sweep      tests/sweep/data/failing.yaml: 3 points, 1 ok, "
                   "2 failed, 0 missing\nfailed\n  point 0 (" +
                       records[0].at("id") + "): " + compileError +
                       "\n  point 1 (" + records[1].at("id") + "): " +
                       configError + "\nresults    " + out +
                       "/results.csv\n");

  // A failure is a result: a second run keeps it, --retry-failed runs it.
  ToolResult again = runSpyre({"sweep", kFailing, "-o", out});
  EXPECT_EQ(again.exitCode, 3);
  EXPECT_EQ(firstLine(again.err),
            "sweep: 3 points, 3 already finished, 0 to run with -j 1");
  ToolResult retry = runSpyre({"sweep", kFailing, "-o", out, "--retry-failed"});
  EXPECT_EQ(retry.exitCode, 3);
  EXPECT_EQ(firstLine(retry.err),
            "sweep: 3 points, 1 already finished, 2 to run with -j 1");
}

/// Starts `spyre args...` in the source tree without waiting for it.
pid_t startSpyre(const std::vector<std::string> &args, const std::string &log) {
  std::vector<std::string> store = {SPYRE_BIN};
  store.insert(store.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const std::string cwd = fs::current_path().string();
  fs::current_path(SPYRE_SOURCE_DIR);
  EXPECT_EQ(posix_spawn(&pid, SPYRE_BIN, &actions, nullptr, argv.data(),
                        environ),
            0);
  fs::current_path(cwd);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

TEST(SweepCli, ResumeAfterAKillRunsOnlyTheMissingPoints) {
  constexpr size_t kPoints = 8;
  const std::string tmp = test::makeTempDir();
  const std::string out = tmp + "/out";
  const pid_t pid =
      startSpyre({"sweep", kResume, "-o", out, "-j", "1"}, tmp + "/first.log");
  ASSERT_GT(pid, 0);
  // Stop it once two points are done (each takes a tenth of a second or so).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (resultFiles(out) < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << readFile(tmp + "/first.log", kTextFileLimit);
  EXPECT_EQ(WEXITSTATUS(status), 130) << readFile(tmp + "/first.log", kTextFileLimit);

  // The point that was running is stopped: nothing appears afterwards.
  const size_t finished = resultFiles(out);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(resultFiles(out), finished);
  ASSERT_GE(finished, 2u);
  ASSERT_LT(finished, kPoints) << "the sweep finished before it was stopped";
  EXPECT_NE(readFile(tmp + "/first.log", kTextFileLimit)
                .find("sweep: interrupted; " + std::to_string(finished) +
                      " of 8 points finished, run again to complete the rest\n"),
            std::string::npos)
      << readFile(tmp + "/first.log", kTextFileLimit);
  std::map<std::string, std::string> before;
  for (const auto &e : fs::directory_iterator(out + "/points")) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos);
    if (e.path().extension() == ".json")
      before[e.path().string()] = readFile(e.path().string(), kTextFileLimit);
  }

  ToolResult r = runSpyre({"sweep", kResume, "-o", out, "-j", "2"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(firstLine(r.err),
            "sweep: 8 points, " + std::to_string(finished) +
                " already finished, " + std::to_string(kPoints - finished) +
                " to run with -j 2");
  EXPECT_EQ(resultFiles(out), kPoints);
  // The results of the first run are untouched (their wall-clock times
  // included, which a second run of the point would change).
  for (const auto &[path, text] : before)
    EXPECT_EQ(readFile(path, kTextFileLimit), text) << path;
  const auto records = csvRecords(out + "/results.csv");
  ASSERT_EQ(records.size(), kPoints);
  for (const auto &rec : records)
    EXPECT_EQ(rec.at("status"), "ok");
}

TEST(SweepCli, PointAndAggregateAreWhatABackendRuns) {
  const std::string out = test::makeTempDir() + "/out";
  ToolResult one = runSpyre({"sweep", kSmall, "-o", out, "--point", "2"});
  ASSERT_EQ(one.exitCode, 0) << all(one);
  EXPECT_EQ(resultFiles(out), 1u);
  EXPECT_EQ(one.out.rfind("point 2 (", 0), 0u) << one.out;

  ToolResult partial = runSpyre({"sweep", kSmall, "-o", out, "--aggregate"});
  EXPECT_EQ(partial.exitCode, 3) << all(partial);
  auto records = csvRecords(out + "/results.csv");
  ASSERT_EQ(records.size(), 6u);
  std::string missing;
  for (const auto &rec : records) {
    EXPECT_EQ(rec.at("status"), rec.at("index") == "2" ? "ok" : "missing");
    if (rec.at("index") != "2")
      missing += "  point " + rec.at("index") + " (" + rec.at("id") + ")\n";
  }
  EXPECT_EQ(partial.out, "sweep      tests/sweep/data/small.yaml: 6 points, 1 "
                         "ok, 0 failed, 5 missing\nmissing\n" +
                             missing + "results    " + out + "/results.csv\n");

  for (const char *i : {"0", "1", "3", "4", "5"})
    ASSERT_EQ(runSpyre({"sweep", kSmall, "-o", out, "--point", i}).exitCode, 0);
  ToolResult full = runSpyre({"sweep", kSmall, "-o", out, "--aggregate"});
  EXPECT_EQ(full.exitCode, 0) << all(full);

  // The same results as the local backend gives.
  const std::string local = test::makeTempDir() + "/out";
  ASSERT_EQ(runSpyre({"sweep", kSmall, "-o", local, "-j", "2"}).exitCode, 0);
  EXPECT_EQ(withoutWallClock(out + "/results.csv"),
            withoutWallClock(local + "/results.csv"));

  // A point that fails is still a finished --point: exit 0, the error in
  // its result.
  const std::string failing = test::makeTempDir() + "/out";
  ToolResult bad = runSpyre({"sweep", kFailing, "-o", failing, "--point", "1"});
  EXPECT_EQ(bad.exitCode, 0) << all(bad);
  EXPECT_NE(bad.out.find(": failed: points/"), std::string::npos) << bad.out;
  EXPECT_EQ(resultFiles(failing), 1u);
}

// ------------------------------------------------------------ report

TEST(SweepCli, ReportShowsTheParetoFrontAndAChartPerParameter) {
  const std::string tmp = test::makeTempDir();
  ToolResult sweep = runSpyre({"sweep", kSmall, "-o", tmp + "/out", "-j", "2"});
  ASSERT_EQ(sweep.exitCode, 0) << all(sweep);
  ToolResult r = runSpyre({"sweep", "report", "out"}, tmp);
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(r.err, "");
  test::expectGolden(r.out, "sweep/small-report.txt");

  // The front computed here from results.csv: no other point is at most as
  // costly (LX x cores) and as slow, and better in one of them.
  const auto records = csvRecords(tmp + "/out/results.csv");
  std::set<std::string> front;
  for (const auto &a : records) {
    const double ca = std::stod(a.at("lx.size_bytes")) * std::stod(a.at("chip.cores"));
    const double ta = std::stod(a.at("simulated_us"));
    bool dominated = false;
    for (const auto &b : records) {
      const double cb = std::stod(b.at("lx.size_bytes")) * std::stod(b.at("chip.cores"));
      const double tb = std::stod(b.at("simulated_us"));
      dominated |= cb <= ca && tb <= ta && (cb < ca || tb < ta);
    }
    if (!dominated)
      front.insert(a.at("index"));
  }
  // A real trade-off: more than one point on the front.
  EXPECT_GE(front.size(), 2u);
  std::set<std::string> printed;
  std::istringstream lines(r.out.substr(r.out.find("pareto front")));
  std::string line;
  std::getline(lines, line); // the title
  std::getline(lines, line); // the header
  while (std::getline(lines, line) && !line.empty()) {
    std::istringstream words(line);
    std::string index;
    words >> index;
    printed.insert(index);
  }
  EXPECT_EQ(printed, front);

  const std::string html = readFile(tmp + "/out/report.html", kTextFileLimit);
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos;
       at = html.find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 3u) << "the Pareto chart and one per swept parameter";
  EXPECT_NE(html.find("Simulated time against chip.cores"), std::string::npos);
  EXPECT_NE(html.find("Simulated time against lx.size_bytes"), std::string::npos);
  for (const auto &rec : records) {
    if (front.count(rec.at("index")) == 0)
      continue;
    EXPECT_NE(html.find("<title>point " + rec.at("index") + " (" +
                        rec.at("id") + ")"),
              std::string::npos);
  }
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg\" class"), html.find("http"))
      << "no link but the SVG namespace";

  // The same results give the same page.
  ASSERT_EQ(runSpyre({"sweep", "report", "out", "-o", "again.html"}, tmp).exitCode, 0);
  EXPECT_EQ(readFile(tmp + "/again.html", kTextFileLimit), html);

  ToolResult onlyCores =
      runSpyre({"sweep", "report", "out", "--x", "chip.cores", "-o", "x.html"}, tmp);
  ASSERT_EQ(onlyCores.exitCode, 0) << all(onlyCores);
  const std::string x = readFile(tmp + "/x.html", kTextFileLimit);
  EXPECT_EQ(x.find("Simulated time against lx.size_bytes"), std::string::npos);
  EXPECT_NE(x.find("Simulated time against chip.cores, one line per "
                   "lx.size_bytes"),
            std::string::npos);
}

TEST(SweepCli, ReportErrors) {
  const std::string tmp = test::makeTempDir();
  ToolResult none = runSpyre({"sweep", "report", "nowhere"}, tmp);
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_EQ(firstLine(none.err), "nowhere: error: no such sweep folder");
  fs::create_directories(tmp + "/empty");
  ToolResult empty = runSpyre({"sweep", "report", "empty"}, tmp);
  EXPECT_EQ(empty.exitCode, 1);
  EXPECT_EQ(firstLine(empty.err),
            "empty: error: not a sweep folder: it has no plan.json (run `spyre "
            "sweep SPEC -o DIR`, or `--aggregate` after a cluster run, first)");
  ASSERT_EQ(runSpyre({"sweep", kSmall, "-o", tmp + "/out", "--point", "0"}).exitCode, 0);
  ASSERT_EQ(runSpyre({"sweep", kSmall, "-o", tmp + "/out", "--aggregate"}).exitCode, 3);
  ToolResult cost = runSpyre({"sweep", "report", "out", "--cost", "chip.cores *"}, tmp);
  EXPECT_EQ(cost.exitCode, 2);
  EXPECT_EQ(firstLine(cost.err),
            "--cost:1:13: error: the expression ends early; expected a number, "
            "a key name or '('");
  ToolResult name = runSpyre({"sweep", "report", "out", "--cost", "2 * name"}, tmp);
  EXPECT_EQ(name.exitCode, 2);
  EXPECT_EQ(firstLine(name.err),
            "--cost:1:5: error: 'name' is not a numeric config key (names are "
            "config keys such as lx.size_bytes, or opt_level)");
  ToolResult axis = runSpyre({"sweep", "report", "out", "--x", "cores"}, tmp);
  EXPECT_EQ(axis.exitCode, 2);
  EXPECT_EQ(firstLine(axis.err),
            "--x: error: 'cores' is not a swept parameter of this sweep (swept: "
            "chip.cores, lx.size_bytes)");
  // A partial sweep reports what it has.
  ToolResult partial = runSpyre({"sweep", "report", "out"}, tmp);
  EXPECT_EQ(partial.exitCode, 0) << all(partial);
  EXPECT_EQ(firstLine(partial.out),
            "sweep      small.yaml: 6 points, 1 ok, 0 failed, 5 missing");
}

} // namespace
} // namespace spyre
