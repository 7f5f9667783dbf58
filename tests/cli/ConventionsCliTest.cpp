// The conventions every `spyre` command shares (README.md, "The `spyre`
// command"): `--` ends the options, `-` is standard output for a written
// file, `--set KEY=VALUE` and `base:` layer a config, `--version` names what
// a result depends on, and `spyre completion bash` knows every command.
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;

std::string writeFile(const std::string &path, const std::string &text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Output of a shell command (for bash and git).
std::string shell(const std::string &command) {
  std::string out;
  std::FILE *p = ::popen(command.c_str(), "r");
  if (!p)
    return out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  ::pclose(p);
  return out;
}

/// A program with one output, assembled into a fresh folder; returns it.
std::string assembledCopy(const std::string &dir) {
  const std::string prog = dir + "/copy.spyre";
  ToolResult r = runSpyre({"asm", srcPath("examples/asm/dma_copy.s"), "-o", prog});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return prog;
}

// ---------------------------------------------------------------------------
// `--`

TEST(Conventions, DoubleDashEndsTheOptionsOfDlf16) {
  ToolResult plain = runSpyre({"dlf16", "-0.5", "1.5"});
  ToolResult dashed = runSpyre({"dlf16", "--", "-0.5", "1.5"});
  EXPECT_EQ(dashed.exitCode, 0) << dashed.err;
  EXPECT_EQ(dashed.out, plain.out);
  EXPECT_EQ(dashed.out, "-0.5 -> 0xbc00 = -0.5\n1.5 -> 0x3f00 = 1.5\n");
  // Options before `--` still count; after it an option is a value.
  ToolResult saturated = runSpyre({"dlf16", "--saturate", "--", "1e10"});
  EXPECT_EQ(saturated.out, "1e10 -> 0x7ffe = 8573157376 (overflow)\n");
  ToolResult value = runSpyre({"dlf16", "1", "--", "--saturate"});
  EXPECT_EQ(value.exitCode, 2);
  EXPECT_EQ(firstLine(value.err),
            "spyre dlf16: error: '--saturate' is not a number (expected e.g. "
            "1.5, -2e-3, 0x1p-4, nan, inf)");
}

TEST(Conventions, DoubleDashMakesAFileThatLooksLikeAnOptionAPositional) {
  const std::string dir = makeTempDir();
  // Each command reads its file argument "-x" after `--`: the error names
  // that file, where without `--` CLI11 would refuse an unknown option.
  const std::vector<std::vector<std::string>> commands = {
      {"config", "check", "--", "-x"},
      {"asm", "--", "-x"},
      {"disasm", "--", "-x"},
      {"sim", "--", "-x"},
      {"verify", "--", "-x"},
      {"graph", "check", "--", "-x"},
      {"graph", "print", "--", "-x"},
      {"compile", "-o", "out.spyre", "--", "-x"},
      {"run", "--", "-x"},
      {"trace", "summary", "--", "-x"},
      {"report", "-o", "out.html", "--", "-x"},
      {"compare", "--", "-x", "-y"},
      {"sweep", "--dry-run", "--", "-x"},
  };
  for (const std::vector<std::string> &args : commands) {
    ToolResult r = runSpyre(args, dir);
    EXPECT_EQ(r.exitCode, 1) << args[0] << ": " << r.err;
    EXPECT_EQ(firstLine(r.err).rfind("-x: error: ", 0), 0u)
        << args[0] << ": " << r.err;
  }
}

// ---------------------------------------------------------------------------
// `-`

TEST(Conventions, DashWritesStatisticsAndTraceToStandardOutput) {
  const std::string dir = makeTempDir();
  const std::string prog = assembledCopy(dir);
  ToolResult toFile = runSpyre({"sim", prog, "--timing-only", "--stats",
                                dir + "/stats.json"});
  ASSERT_EQ(toFile.exitCode, 0) << toFile.err;
  ToolResult toStdout = runSpyre({"sim", prog, "--timing-only", "--stats", "-"});
  ASSERT_EQ(toStdout.exitCode, 0) << toStdout.err;
  EXPECT_EQ(toStdout.out, readBytes(dir + "/stats.json"));
  // The summary moves to standard error, as it is.
  EXPECT_EQ(toStdout.err, toFile.out);
  EXPECT_FALSE(fs::exists(dir + "/-"));

  ToolResult trace = runSpyre({"sim", prog, "--timing-only", "--trace", "-"});
  ASSERT_EQ(trace.exitCode, 0) << trace.err;
  ToolResult report = runSpyre({"report", "-", "-o", "-"}, "", trace.out);
  // `report` reads no standard input: "-" there is a file name.
  EXPECT_EQ(report.exitCode, 1);
  writeFile(dir + "/trace.json", trace.out);
  ToolResult html = runSpyre({"report", dir + "/trace.json", "-o", "-"});
  ASSERT_EQ(html.exitCode, 0) << html.err;
  ASSERT_EQ(runSpyre({"report", dir + "/trace.json", "-o", dir + "/r.html"}).exitCode, 0);
  EXPECT_EQ(html.out, readBytes(dir + "/r.html"));
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(Conventions, DashWritesTheOneOutputTensorToStandardOutput) {
  const std::string dir = makeTempDir();
  const std::string prog = assembledCopy(dir);
  const std::string inputs = srcPath("tests/data/sim/dma_copy");
  ASSERT_TRUE(fs::exists(inputs + "/x.npy")) << inputs;
  ToolResult folder = runSpyre({"sim", prog, "--inputs", inputs, "--outputs",
                                dir + "/out"});
  ASSERT_EQ(folder.exitCode, 0) << folder.err;
  ToolResult dash = runSpyre({"sim", prog, "--inputs", inputs, "--outputs", "-"});
  ASSERT_EQ(dash.exitCode, 0) << dash.err;
  EXPECT_EQ(dash.out, readBytes(dir + "/out/y.npy"));
  EXPECT_EQ(dash.out.rfind("\x93NUMPY", 0), 0u);
}

TEST(Conventions, DashWritesTheOneOutputOfAReferenceEvaluation) {
  const std::string dir = makeTempDir();
  const std::string model = srcPath("examples/models/gpt_block/model.json");
  ASSERT_EQ(runSpyre({"graph", "eval", model, "--seed", "3", "--outputs", dir})
                .exitCode,
            0);
  ToolResult dash =
      runSpyre({"graph", "eval", model, "--inputs", dir, "--outputs", "-"});
  ASSERT_EQ(dash.exitCode, 0) << dash.err;
  EXPECT_EQ(dash.out, readBytes(dir + "/out.npy"));
}

TEST(Conventions, DashIsStandardOutputForDisasmAndAsm) {
  const std::string dir = makeTempDir();
  const std::string prog = assembledCopy(dir);
  ToolResult plain = runSpyre({"disasm", prog});
  ToolResult dash = runSpyre({"disasm", prog, "-o", "-"});
  EXPECT_EQ(dash.exitCode, 0) << dash.err;
  EXPECT_EQ(dash.out, plain.out);
  ToolResult bytes =
      runSpyre({"asm", srcPath("examples/asm/dma_copy.s"), "-o", "-"});
  EXPECT_EQ(bytes.exitCode, 0) << bytes.err;
  EXPECT_EQ(bytes.out, readBytes(prog));
  EXPECT_EQ(firstLine(bytes.err).rfind("-: 2 streams", 0), 0u) << bytes.err;
}

// ---------------------------------------------------------------------------
// `--set` and `base:`

TEST(Conventions, SetAndAPartialFileOverABaseGiveTheSameConfig) {
  const std::string dir = makeTempDir();
  const std::string file = writeFile(dir + "/fast.yaml",
                                     "base: default\n"
                                     "memory:\n"
                                     "  peak_gb_per_s: 409.6\n"
                                     "  sustained_read_gb_per_s: 300\n");
  ToolResult fromFile = runSpyre({"config", "show", "--config", file});
  ToolResult fromSet =
      runSpyre({"config", "show", "--set", "memory.peak_gb_per_s=409.6",
                "--set", "memory.sustained_read_gb_per_s=300"});
  ASSERT_EQ(fromFile.exitCode, 0) << fromFile.err;
  ASSERT_EQ(fromSet.exitCode, 0) << fromSet.err;
  EXPECT_EQ(fromFile.out, fromSet.out);

  // Against the built-in config, exactly those two lines and the
  // fingerprint differ.
  hw::HwConfig expected = hw::builtinConfig();
  expected.memory.peakGBps = 409.6;
  expected.memory.sustainedReadGBps = 300;
  EXPECT_EQ(fromSet.out, hw::toYaml(expected, true));
  EXPECT_NE(expected.fingerprint(), hw::builtinConfig().fingerprint());
}

TEST(Conventions, ABaseIsFoundFromTheFolderOfTheFileNamingIt) {
  const std::string dir = makeTempDir();
  writeFile(dir + "/base.yaml", "base: default\nname: wide\npt:\n  pe_rows: 16\n");
  const std::string leaf = writeFile(dir + "/variants/leaf.yaml",
                                     "base: ../base.yaml\nname: wide-small\n"
                                     "lx:\n  size_bytes: 1048576\n");
  // Run from another folder: the base is relative to leaf.yaml, not to it.
  // It lies above leaf.yaml's folder, so the folder bases may come from is
  // widened to `dir`.
  ToolResult r = runSpyre(
      {"config", "show", "--config", leaf, "--config-root", dir}, makeTempDir());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  hw::HwConfig expected = hw::builtinConfig();
  expected.name = "wide-small";
  expected.pt.peRows = 16;
  expected.lx.sizeBytes = 1048576;
  EXPECT_EQ(r.out, hw::toYaml(expected, true));
  ToolResult checked =
      runSpyre({"config", "check", leaf, "--config-root", dir});
  EXPECT_EQ(checked.out, leaf + ": ok (fingerprint " +
                             hw::fingerprintString(expected.fingerprint()) +
                             ")\n");
}

TEST(Conventions, ABaseNeverLeadsOutOfTheFolderChosen) {
  const std::string dir = makeTempDir();
  writeFile(dir + "/outside.yaml", "base: default\nname: elsewhere\n");
  // Through `..` and through a symbolic link: both resolve outside the
  // folder of the config named, and neither is read.
  const std::string up =
      writeFile(dir + "/cfg/up.yaml", "base: ../outside.yaml\n");
  std::filesystem::create_symlink(dir + "/outside.yaml", dir + "/cfg/link.yaml");
  const std::string linked =
      writeFile(dir + "/cfg/linked.yaml", "base: link.yaml\n");
  for (const std::string &file : {up, linked}) {
    ToolResult r = runSpyre({"config", "show", "--config", file});
    EXPECT_EQ(r.exitCode, 1) << file;
    EXPECT_NE(r.err.find(file + ":1:7: error: base: "), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("lies outside the folder of " + file),
              std::string::npos)
        << r.err;
    // The same file compiles and simulates with the folder widened.
    ToolResult widened = runSpyre(
        {"config", "show", "--config", file, "--config-root", dir});
    EXPECT_EQ(widened.exitCode, 0) << widened.err;
    EXPECT_NE(widened.out.find("name: elsewhere"), std::string::npos);
  }
  // --config-root must be a folder.
  ToolResult bad = runSpyre({"config", "show", "--config", up,
                             "--config-root", dir + "/nope"});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
}

TEST(Conventions, LaterSettingsWinAndApplyOverTheFile) {
  const std::string dir = makeTempDir();
  const std::string file =
      writeFile(dir + "/c.yaml", "base: default\nchip:\n  cores: 16\n");
  ToolResult r = runSpyre({"config", "fingerprint", "--config", file, "--set",
                           "chip.cores=8", "--set", "chip.cores=32"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out,
            hw::fingerprintString(hw::builtinConfig().fingerprint()) + "\n");
}

TEST(Conventions, CompileAndSimulateWithTheSameSettings) {
  const std::string dir = makeTempDir();
  const std::string model = srcPath("examples/models/gpt_block/model.json");
  const std::vector<std::string> set = {"--set", "memory.peak_gb_per_s=409.6",
                                        "--set",
                                        "memory.sustained_read_gb_per_s=300"};
  std::vector<std::string> compile = {"compile", model, "-o", dir + "/m.spyre"};
  compile.insert(compile.end(), set.begin(), set.end());
  ASSERT_EQ(runSpyre(compile).exitCode, 0);
  std::vector<std::string> sim = {"sim", dir + "/m.spyre", "--timing-only"};
  sim.insert(sim.end(), set.begin(), set.end());
  ToolResult faster = runSpyre(sim);
  EXPECT_EQ(faster.exitCode, 0) << faster.err;
  // Without the settings the program is for another config.
  ToolResult other = runSpyre({"sim", dir + "/m.spyre", "--timing-only"});
  EXPECT_EQ(other.exitCode, 1);
  EXPECT_NE(other.err.find("recompile"), std::string::npos) << other.err;

  // And the faster memory is faster: fewer cycles than the built-in config.
  ASSERT_EQ(runSpyre({"compile", model, "-o", dir + "/b.spyre"}).exitCode, 0);
  ToolResult builtin = runSpyre({"sim", dir + "/b.spyre", "--timing-only"});
  auto cycles = [](const std::string &out) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(out, m, std::regex("\ncycles +([0-9]+)\n")))
        << out;
    return std::stoull(m[1]);
  };
  EXPECT_LT(cycles(faster.out), cycles(builtin.out));
}

// ---------------------------------------------------------------------------
// `--version`

TEST(Conventions, VersionNamesRevisionIsaConfigAndLibraries) {
  ToolResult r = runSpyre({"--version"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream lines(r.out);
  std::map<std::string, std::string> fields;
  std::string line;
  std::getline(lines, line);
  EXPECT_TRUE(std::regex_match(line, std::regex(R"(spyre [0-9]+\.[0-9]+\.[0-9]+)")))
      << line;
  while (std::getline(lines, line)) {
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    fields[line.substr(0, space)] =
        line.substr(line.find_first_not_of(' ', space));
  }
  EXPECT_EQ(fields["isa"], std::to_string(isa::kIsaVersionMajor) + "." +
                               std::to_string(isa::kIsaVersionMinor));
  EXPECT_EQ(fields["config"],
            hw::fingerprintString(hw::builtinConfig().fingerprint()) +
                " (built-in " + hw::builtinConfig().name + ")");
  const std::regex version(R"([0-9]+\.[0-9]+\.[0-9]+.*)");
  for (const char *lib : {"systemc", "onnx", "protobuf"})
    EXPECT_TRUE(std::regex_match(fields[lib], version)) << lib << ": " << fields[lib];
  const std::string head =
      shell("git -C " + srcPath(".") + " rev-parse HEAD 2>/dev/null");
  if (head.size() < 12)
    GTEST_SKIP() << "not a git checkout";
  // The binary may be a commit behind a tree being edited, never another
  // history: its revision is a commit of this repository.
  const std::string revision = fields["revision"].substr(0, 12);
  EXPECT_EQ(shell("git -C " + srcPath(".") + " cat-file -t " + revision +
                  " 2>/dev/null"),
            "commit\n")
      << fields["revision"];
}

// ---------------------------------------------------------------------------
// `spyre completion bash`

TEST(Conventions, BashCompletionKnowsEveryCommandOptionAndConfigKey) {
  ToolResult script = runSpyre({"completion", "bash"});
  ASSERT_EQ(script.exitCode, 0) << script.err;
  const std::string dir = makeTempDir();
  writeFile(dir + "/spyre.bash", script.out);
  EXPECT_EQ(shell("bash -n " + dir + "/spyre.bash 2>&1; echo $?"), "0\n");
  // What bash offers after the words typed so far.
  auto complete = [&](const std::string &words) {
    const std::string driver = writeFile(
        dir + "/complete.sh",
        "source " + dir + "/spyre.bash\n"
        "COMP_WORDS=(" + words + ")\n"
        "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
        "_spyre\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n");
    return shell("cd " + dir + " && bash " + driver + " 2>&1");
  };
  EXPECT_EQ(complete("spyre si"), "sim\n");
  EXPECT_EQ(complete("spyre config sh"), "show\n");
  EXPECT_EQ(complete("spyre sim --tim"), "--timing-only\n");
  EXPECT_EQ(complete("spyre sweep --backend ''"), "local\nslurm\n");
  EXPECT_EQ(complete("spyre compile --set memory.peak"),
            "memory.peak_gb_per_s=\n");
  // The value of an option is not taken for a command.
  EXPECT_EQ(complete("spyre sim --config sim --no-ch"), "--no-checks\n");
  // Every command `spyre --help` lists is offered.
  ToolResult help = runSpyre({"--help"});
  std::string offered = complete("spyre ''");
  std::smatch m;
  std::string rest = help.out.substr(help.out.find("Subcommands:"));
  const std::regex command(R"(\n  ([a-z0-9]+) )");
  int commands = 0;
  while (std::regex_search(rest, m, command)) {
    EXPECT_NE(offered.find(m[1].str() + "\n"), std::string::npos) << m[1];
    ++commands;
    rest = m.suffix();
  }
  EXPECT_GE(commands, 14);
}

} // namespace
} // namespace spyre::test
