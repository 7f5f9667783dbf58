// The Slurm backend of `spyre sweep`: the --array lists and the shell
// quoting against hand-written values, the batch scripts and the printed
// submit commands against golden text, resuming (only the points without a
// result are in the array), the errors of a bad output folder and of a
// missing sbatch, and a whole sweep through a private single-node Slurm
// (scripts/slurm-local.sh) whose results must equal the local backend's.
#include "sweep/Slurm.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace spyre::sweep {
namespace {

namespace fs = std::filesystem;
using test::makeTempDir;
using test::readSource;
using test::runSpyre;
using test::srcPath;
using test::ToolResult;

/// The sweep both backends run: mlp_block over four points.
const char *const kSpec = "tests/sweep/data/slurm_small.yaml";
constexpr size_t kSpecPoints = 4;

std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Text with this machine's paths replaced by placeholders, for goldens.
std::string withPlaceholders(std::string text, const std::string &dir) {
  text = replaceAll(std::move(text), dir, "<DIR>");
  text = replaceAll(std::move(text), SPYRE_BIN, "<SPYRE>");
  return replaceAll(std::move(text), srcPath(kSpec), "<SPEC>");
}

struct ProgramResult {
  int exitCode = -1;
  std::string output; ///< stdout and stderr together
};

/// Runs a program found on PATH with stdout and stderr into one file.
ProgramResult runProgram(const std::vector<std::string> &args) {
  const std::string outPath = makeTempDir() + "/output";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, outPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<std::string> store = args;
  std::vector<char *> argv;
  for (std::string &a : store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ProgramResult r;
  const int rc =
      posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return r;
  int status = 0;
  if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  r.output = readFile(outPath, kTextFileLimit);
  return r;
}

/// Whether `name` is an executable in PATH or in sbin.
bool haveProgram(const std::string &name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0)
      return true;
  return false;
}

std::vector<std::vector<std::string>> csvRows(const std::string &text) {
  // The sweep's CSV quotes no field of these results (no commas, no
  // errors), so splitting at commas reads it exactly.
  std::vector<std::vector<std::string>> rows;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> row;
    std::stringstream fields(line);
    std::string field;
    while (std::getline(fields, field, ','))
      row.push_back(field);
    if (!line.empty() && line.back() == ',')
      row.emplace_back();
    rows.push_back(row);
  }
  return rows;
}

/// results.csv without its wall-clock columns (compile_s, simulate_s,
/// wall_s), which differ from run to run.
std::vector<std::vector<std::string>> withoutWallClock(const std::string &csv) {
  std::vector<std::vector<std::string>> rows = csvRows(csv);
  if (rows.empty())
    return rows;
  std::vector<bool> keep;
  for (const std::string &name : rows.front())
    keep.push_back(name != "compile_s" && name != "simulate_s" &&
                   name != "wall_s");
  for (std::vector<std::string> &row : rows) {
    std::vector<std::string> kept;
    for (size_t c = 0; c < row.size(); ++c)
      if (c >= keep.size() || keep[c])
        kept.push_back(row[c]);
    row = kept;
  }
  return rows;
}

/// The values of column `name` in every data row.
std::vector<std::string>
column(const std::vector<std::vector<std::string>> &rows,
       const std::string &name) {
  std::vector<std::string> out;
  if (rows.empty())
    return out;
  size_t c = 0;
  while (c < rows.front().size() && rows.front()[c] != name)
    ++c;
  for (size_t r = 1; r < rows.size(); ++r)
    out.push_back(c < rows[r].size() ? rows[r][c] : "<no column " + name + ">");
  return out;
}

std::string slurmLogs(const std::string &dir) {
  std::string text;
  std::error_code ec;
  for (const fs::directory_entry &e :
       fs::directory_iterator(fs::path(dir) / "slurm" / "logs", ec))
    text += "--- " + e.path().filename().string() + "\n" +
            readFile(e.path().string(), kTextFileLimit);
  return text;
}

// ---------------------------------------------------------------------------
// Without Slurm

TEST(SlurmArraySpec, ContiguousIndicesAreOneRange) {
  EXPECT_EQ(slurmArraySpec({0, 1, 2, 3}, 2), "0-3%2");
  EXPECT_EQ(slurmArraySpec({7}, 1), "7%1");
}

TEST(SlurmArraySpec, GapsAreListedAndRunsStayRanges) {
  EXPECT_EQ(slurmArraySpec({3, 5, 7}, 2), "3,5,7%2");
  EXPECT_EQ(slurmArraySpec({0, 1, 2, 5, 7, 8}, 4), "0-2,5,7-8%4");
  EXPECT_EQ(slurmArraySpec({0, 2, 3}, 16), "0,2-3%16");
}

TEST(ShellQuote, LeavesPlainWordsAlone) {
  EXPECT_EQ(shellQuote("/opt/spyre-0.1/bin/spyre"), "/opt/spyre-0.1/bin/spyre");
  EXPECT_EQ(shellQuote("--point"), "--point");
}

TEST(ShellQuote, WritesSingleQuotesAsQuoteEscapeQuote) {
  EXPECT_EQ(shellQuote("a b"), "'a b'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote("$x"), "'$x'");
  EXPECT_EQ(shellQuote(""), "''");
}

TEST(ShellQuote, ShellReadsBackTheExactWord) {
  // /bin/sh is the independent reference: printf prints the word it got.
  for (const std::string word : {"a b", "it's", "$HOME `id` $(id)", "\"x\"\\n",
                                 "100%", "*?[a]", "-n", "line\nbreak", "''"}) {
    const ProgramResult r =
        runProgram({"sh", "-c", "printf '%s' " + shellQuote(word)});
    EXPECT_EQ(r.exitCode, 0);
    EXPECT_EQ(r.output, word);
  }
}

TEST(SlurmScripts, QuotePathsForSbatchAndTheShell) {
  SweepPlan plan;
  plan.specPath = "/specs/my sweep.yaml";
  plan.outDir = "/runs/it's \"50%\" done";
  SweepPoint p;
  p.index = 0;
  p.id = "000000000000";
  plan.points.push_back(p);
  SweepRunOptions options;
  options.jobs = 3;
  options.spyreExe = "/opt/spyre bin/spyre";
  const SlurmScripts s = slurmScripts(plan, {0}, options);
  // sbatch: double quotes, \" inside them, %% for a literal %.
  EXPECT_NE(s.sweep.find("#SBATCH --output=\"/runs/it's \\\"50%%\\\" "
                         "done/slurm/logs/point-%a.out\"\n"),
            std::string::npos)
      << s.sweep;
  // sh: single quotes, ' written as '\''.
  EXPECT_NE(s.sweep.find("exec '/opt/spyre bin/spyre' sweep '/specs/my "
                         "sweep.yaml' -o '/runs/it'\\''s \"50%\" done' --point "
                         "\"$SLURM_ARRAY_TASK_ID\"\n"),
            std::string::npos)
      << s.sweep;
  EXPECT_NE(s.aggregate.find("-o '/runs/it'\\''s \"50%\" done' --aggregate\n"),
            std::string::npos)
      << s.aggregate;
}

TEST(SlurmScripts, WriteArrayAndAggregationScripts) {
  const std::string dir = makeTempDir() + "/out";
  const ToolResult r = runSpyre(
      {"sweep", srcPath(kSpec), "-o", dir, "-j", "2", "--backend", "slurm"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  test::expectGolden(withPlaceholders(r.out, dir), "sweep/slurm_submit.txt");
  test::expectGolden(
      withPlaceholders(readFile(dir + "/slurm/sweep.sbatch", kTextFileLimit), dir),
      "sweep/slurm_sweep.sbatch");
  test::expectGolden(
      withPlaceholders(readFile(dir + "/slurm/aggregate.sbatch", kTextFileLimit), dir),
      "sweep/slurm_aggregate.sbatch");
  // Slurm does not create the folder of --output; the scripts need it.
  EXPECT_TRUE(fs::is_directory(dir + "/slurm/logs"));
}

TEST(SlurmScripts, ResumeListsOnlyPointsWithoutResult) {
  const std::string dir = makeTempDir() + "/out";
  for (const char *point : {"1", "2"}) {
    const ToolResult run =
        runSpyre({"sweep", srcPath(kSpec), "-o", dir, "--point", point});
    ASSERT_EQ(run.exitCode, 0) << run.err;
  }
  const ToolResult r = runSpyre(
      {"sweep", srcPath(kSpec), "-o", dir, "-j", "2", "--backend", "slurm"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("4 points, 2 already finished, 2 in the job array"),
            std::string::npos)
      << r.out;
  const std::string script = readFile(dir + "/slurm/sweep.sbatch", kTextFileLimit);
  EXPECT_NE(script.find("#SBATCH --array=0,3%2\n"), std::string::npos)
      << script;
}

TEST(SlurmScripts, NothingToSubmitWhenEveryPointHasAResult) {
  const std::string dir = makeTempDir() + "/out";
  const ToolResult local =
      runSpyre({"sweep", srcPath(kSpec), "-o", dir, "-j", "2"});
  ASSERT_EQ(local.exitCode, 0) << local.err;
  const std::string before = readFile(dir + "/results.csv", kTextFileLimit);
  // --submit too: nothing is submitted, so no sbatch is needed.
  const ToolResult r = runSpyre(
      {"sweep", srcPath(kSpec), "-o", dir, "--backend", "slurm", "--submit"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("all 4 points have a result; nothing to submit"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/slurm/sweep.sbatch"));
  EXPECT_EQ(withoutWallClock(readFile(dir + "/results.csv", kTextFileLimit)),
            withoutWallClock(before));
}

TEST(SlurmScripts, OutputFolderWithLineBreakIsRefused) {
  const std::string dir = makeTempDir() + "/two\nlines";
  const ToolResult r =
      runSpyre({"sweep", srcPath(kSpec), "-o", dir, "--backend", "slurm"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("error: the output folder's path holds a line break, "
                       "which an #SBATCH line cannot name"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(SlurmScripts, OutputFolderWithBackslashIsRefused) {
  const std::string dir = makeTempDir() + "/back\\slash";
  const ToolResult r =
      runSpyre({"sweep", srcPath(kSpec), "-o", dir, "--backend", "slurm"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find(dir + ": error: the output folder's path holds a "
                             "backslash, which Slurm drops from the log file "
                             "names of --output and --error"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir));
}

/// A plan of one point whose spec is `specPath` and output folder `outDir`.
SweepPlan onePointPlan(const std::string &specPath, const std::string &outDir) {
  SweepPlan plan;
  plan.specPath = specPath;
  plan.outDir = outDir;
  SweepPoint p;
  p.index = 0;
  p.id = "000000000000";
  plan.points.push_back(p);
  return plan;
}

/// The UserError message slurmScripts throws, or "" when it does not.
std::string scriptError(const SweepPlan &plan, const SweepRunOptions &options) {
  try {
    slurmScripts(plan, {0}, options);
  } catch (const UserError &e) {
    EXPECT_EQ(e.exitCode(), ExitCode::BadInput);
    return e.diagnostic().str();
  }
  return "";
}

TEST(SlurmScripts, HostileSpecNamesStayInertWords) {
  // The scripts run with a stand-in executable that prints each argument it
  // gets on a line of its own: the script must run exactly that one command
  // with the three paths intact, and nothing the names hold.
  const std::string dir = makeTempDir();
  const std::string echo = dir + "/args.sh";
  writeFileAtomic(echo, "#!/bin/sh\nfor a; do printf '[%s]\\n' \"$a\"; done\n");
  fs::permissions(echo, fs::perms::owner_all);
  // What a name would create if the shell ran a part of it (in `dir`).
  const std::string marker = dir + "/ran";
  for (const std::string &name : std::vector<std::string>{
           "q'uote\"s.yaml", "$(touch ran).yaml", "`touch ran`.yaml",
           "a;touch ran #.yaml",
        "${IFS}$HOME%%x.yaml"}) {
    SCOPED_TRACE(name);
    SweepPlan plan = onePointPlan(dir + "/" + name, dir + "/out " + name);
    SweepRunOptions options;
    options.spyreExe = echo;
    const SlurmScripts s = slurmScripts(plan, {0}, options);
    // The comment names the spec as one quoted shell word.
    EXPECT_NE(s.sweep.find("# The job array of sweep " + shellQuote(name) +
                           ": task I"),
              std::string::npos)
        << s.sweep;
    for (bool array : {true, false}) {
      const std::string &script = array ? s.sweep : s.aggregate;
      const std::string path = dir + "/script.sh";
      writeFileAtomic(path, script);
      EXPECT_EQ(runProgram({"bash", "-n", path}).exitCode, 0) << script;
      const ProgramResult run =
          runProgram({"env", "-C", dir, "SLURM_ARRAY_TASK_ID=0", "sh", path});
      EXPECT_EQ(run.exitCode, 0) << run.output;
      const std::string last =
          array ? "[--point]\n[0]\n" : "[--aggregate]\n";
      EXPECT_EQ(run.output, "[sweep]\n[" + dir + "/" + name + "]\n[-o]\n[" +
                                dir + "/out " + name + "]\n" + last)
          << script;
    }
    EXPECT_FALSE(fs::exists(marker));
  }
}

TEST(SlurmScripts, ControlCharactersInPathsAreRefused) {
  SweepRunOptions options;
  options.spyreExe = "/opt/spyre/bin/spyre";
  // A line break in the spec's name would end the comment and start a
  // command; a tab, an escape or DEL have no place in a script either.
  EXPECT_EQ(scriptError(onePointPlan("/specs/a\ntouch x\n.yaml", "/runs/out"),
                        options),
            "/specs/a\\x0atouch x\\x0a.yaml: error: the sweep spec's path "
            "holds a control character (byte 0x0a at offset 8), which a batch "
            "script cannot hold; rename it");
  EXPECT_NE(scriptError(onePointPlan("/specs/tab\t.yaml", "/runs/out"), options)
                .find("the sweep spec's path holds a control character (byte "
                      "0x09"),
            std::string::npos);
  EXPECT_NE(scriptError(onePointPlan("/specs/s.yaml", "/runs/\x1b[2Jout"),
                        options)
                .find("/runs/\\x1b[2Jout/slurm/logs: error: the output "
                      "folder's path holds a control character (byte 0x1b"),
            std::string::npos);
  options.spyreExe = "/opt/spy\x7fre";
  EXPECT_NE(scriptError(onePointPlan("/specs/s.yaml", "/runs/out"), options)
                .find("the spyre executable's path holds a control character "
                      "(byte 0x7f"),
            std::string::npos);
}

TEST(SlurmScripts, SpecNameWithLineBreakIsRefusedBeforeAnythingIsWritten) {
  const std::string dir = makeTempDir();
  const std::string spec = dir + "/x\nid\n.yaml";
  writeFileAtomic(spec, "models: [" + srcPath("examples/models/mlp_block/"
                                              "model.json") +
                            "]\ngrid: {chip.cores: [4, 8]}\n");
  const ToolResult r = runSpyre(
      {"sweep", spec, "-o", dir + "/out", "--backend", "slurm"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("error: the sweep spec's path holds a control "
                       "character (byte 0x0a"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
}

TEST(SlurmSubmit, MissingSbatchIsNamed) {
  const std::string dir = makeTempDir() + "/out";
  // A PATH of one empty folder for the child: no sbatch anywhere.
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", makeTempDir().c_str(), 1);
  const ToolResult r = runSpyre(
      {"sweep", srcPath(kSpec), "-o", dir, "--backend", "slurm", "--submit"});
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("error: sbatch not found on PATH; --submit needs the "
                       "Slurm client commands"),
            std::string::npos)
      << r.err;
  // The scripts are written before the submission is attempted.
  EXPECT_TRUE(fs::exists(dir + "/slurm/sweep.sbatch"));
}

// ---------------------------------------------------------------------------
// Through a private Slurm

/// Starts a private single-node Slurm for one test and stops it in TearDown,
/// so it stops even when the test fails; skips where Slurm cannot start.
class SlurmCluster : public ::testing::Test {
protected:
  void SetUp() override {
    if (::geteuid() != 0)
      GTEST_SKIP() << "the private Slurm cluster needs root";
    for (const char *tool :
         {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo"})
      if (!haveProgram(tool))
        GTEST_SKIP() << tool
                     << " is not installed (Debian: slurm-wlm, munge; "
                        "scripts/install-deps.sh)";
    stateDir_ = makeTempDir();
    const ProgramResult start = runProgram(
        {"bash", srcPath("scripts/slurm-local.sh"), "start", stateDir_});
    if (start.exitCode != 0) {
      // The script stops whatever it started when it fails.
      GTEST_SKIP() << "Slurm could not start here:\n" << start.output;
    }
    started_ = true;
    ::setenv("SLURM_CONF", (stateDir_ + "/slurm.conf").c_str(), 1);
  }

  void TearDown() override {
    if (!started_)
      return;
    const ProgramResult stop = runProgram(
        {"bash", srcPath("scripts/slurm-local.sh"), "stop", stateDir_});
    EXPECT_EQ(stop.exitCode, 0) << stop.output;
  }

private:
  std::string stateDir_;
  bool started_ = false;
};

TEST_F(SlurmCluster, SweepResultsEqualTheLocalBackend) {
  const auto start = std::chrono::steady_clock::now();
  const std::string base = makeTempDir();
  const std::string localDir = base + "/local";
  // A folder name that both sbatch and the shell must be given quoted.
  const std::string slurmDir = base + "/via slurm 'q' \"100%\"";

  const ToolResult local =
      runSpyre({"sweep", srcPath(kSpec), "-o", localDir, "-j", "2"});
  ASSERT_EQ(local.exitCode, 0) << local.err;

  const ToolResult viaSlurm =
      runSpyre({"sweep", srcPath(kSpec), "-o", slurmDir, "-j", "2", "--backend",
                "slurm", "--submit"});
  ASSERT_EQ(viaSlurm.exitCode, 0)
      << viaSlurm.out << viaSlurm.err << slurmLogs(slurmDir);
  EXPECT_NE(viaSlurm.err.find("4 points, 0 already finished, 4 to run as "
                              "Slurm job array"),
            std::string::npos)
      << viaSlurm.err;
  EXPECT_NE(viaSlurm.err.find("[4/4] 0 running, 0 failed"), std::string::npos)
      << viaSlurm.err;
  EXPECT_NE(viaSlurm.out.find("4 points, 4 ok, 0 failed, 0 missing"),
            std::string::npos)
      << viaSlurm.out;
  // The aggregation job ran after the array and wrote the same summary.
  EXPECT_NE(readFile(slurmDir + "/slurm/logs/aggregate.out", kTextFileLimit)
                .find("4 points, 4 ok, 0 failed, 0 missing"),
            std::string::npos)
      << slurmLogs(slurmDir);

  const auto localRows = withoutWallClock(readFile(localDir + "/results.csv", kTextFileLimit));
  const auto slurmRows = withoutWallClock(readFile(slurmDir + "/results.csv", kTextFileLimit));
  ASSERT_EQ(localRows.size(), kSpecPoints + 1);
  EXPECT_EQ(slurmRows, localRows);
  EXPECT_EQ(column(slurmRows, "status"),
            std::vector<std::string>(kSpecPoints, "ok"));

  // Resume through Slurm: two results gone, only they run again, as an
  // explicit index list.
  for (const std::string &id :
       {column(slurmRows, "id")[1], column(slurmRows, "id")[3]})
    fs::remove(slurmDir + "/points/" + id + ".json");
  const ToolResult resumed =
      runSpyre({"sweep", srcPath(kSpec), "-o", slurmDir, "-j", "2", "--backend",
                "slurm", "--submit"});
  ASSERT_EQ(resumed.exitCode, 0)
      << resumed.out << resumed.err << slurmLogs(slurmDir);
  EXPECT_NE(readFile(slurmDir + "/slurm/sweep.sbatch", kTextFileLimit)
                .find("#SBATCH --array=1,3%2\n"),
            std::string::npos);
  EXPECT_NE(resumed.err.find("4 points, 2 already finished, 2 to run"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(withoutWallClock(readFile(slurmDir + "/results.csv", kTextFileLimit)), localRows);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  RecordProperty("seconds", std::to_string(seconds));
  std::cout << "local and two Slurm sweeps took " << seconds << " s\n";
}

TEST_F(SlurmCluster, ExampleSweepEqualsTheLocalBackend) {
  // docs/sweep.md's example: 33 points of the GPT-style decoder block.
  const char *const example = "examples/sweeps/gpt_lx_cores_bw.yaml";
  const auto start = std::chrono::steady_clock::now();
  const std::string base = makeTempDir();
  const ToolResult local =
      runSpyre({"sweep", srcPath(example), "-o", base + "/local", "-j", "2"});
  ASSERT_EQ(local.exitCode, 0) << local.err;
  const ToolResult viaSlurm =
      runSpyre({"sweep", srcPath(example), "-o", base + "/slurm", "-j", "2",
                "--backend", "slurm", "--submit"});
  ASSERT_EQ(viaSlurm.exitCode, 0)
      << viaSlurm.out << viaSlurm.err << slurmLogs(base + "/slurm");

  const auto localRows =
      withoutWallClock(readFile(base + "/local/results.csv", kTextFileLimit));
  ASSERT_EQ(localRows.size(), 34u);
  EXPECT_EQ(withoutWallClock(readFile(base + "/slurm/results.csv", kTextFileLimit)), localRows);
  EXPECT_EQ(column(localRows, "status"), std::vector<std::string>(33, "ok"));

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  RecordProperty("seconds", std::to_string(seconds));
  std::cout << "the example locally and through Slurm took " << seconds
            << " s\n";
}

} // namespace
} // namespace spyre::sweep
