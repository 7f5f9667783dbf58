// What `spyre` does with files that are hostile or given carelessly, where
// a catalogue case (tests/bad-inputs/) cannot express the input: program
// files whose tensor names are paths (the assembler refuses to make them),
// standard output that cannot be written, outputs that are hard links to an
// input, devices and pipes as inputs, runs that need more host memory than
// any machine has.
#include "isa/Assembler.h"
#include "isa/Program.h"
#include "hw/HwConfig.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;

/// One input `a` and one output `y`, copied through LX.
const char *const kCopy = R"(.program "copy"
.tensor input  a dl16 [2, 64] @ 0x0
.tensor output y dl16 [2, 64] @ 0x2
.core 0
.engine dma.load
.op "copy"
    ld      0x0, 0x0, run=2
    signal  c0, 1
    halt
.engine dma.store
.op "copy"
    wait    c0, 1
    st      0x2, 0x0, run=2
    halt
)";

/// The copy program with its tensors renamed, as a file: the assembler
/// refuses such names, a hand-made file may hold them.
std::string programWithNames(const std::string &input, const std::string &output) {
  DiagnosticEngine diags;
  isa::Program p =
      isa::assemble(kCopy, "copy.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  p.tensors[0].name = input;
  p.tensors[1].name = output;
  return isa::writeProgram(p);
}

/// The copy program with its own name and its op's name replaced, as a
/// file the assembler would refuse to make.
std::string programWithOpNames(const std::string &program, const std::string &op) {
  DiagnosticEngine diags;
  isa::Program p =
      isa::assemble(kCopy, "copy.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  p.name = program;
  EXPECT_EQ(p.strings.size(), 1u);
  p.strings[0] = op;
  return isa::writeProgram(p);
}

TEST(ProgramNames, ControlCharactersInNamesAreRefusedAtLoad) {
  // Names are printed in listings, summaries and findings: an escape
  // sequence would drive the user's terminal, a newline forge a line.
  struct Case {
    std::string program, op, message;
  };
  const std::vector<Case> cases = {
      {"copy", "co\x1b[2Jpy",
       "prog.spyre: error: section 'PROV': op name 'co\\x1b[2Jpy' holds a "
       "control character"},
      {"copy\nfindings   0", "copy",
       "prog.spyre: error: section 'NAME': the program name "
       "'copy\\x0afindings   0' holds a control character"},
  };
  for (const Case &c : cases) {
    const std::string dir = makeTempDir();
    writeFileAtomic(dir + "/prog.spyre", programWithOpNames(c.program, c.op));
    for (const char *cmd : {"sim", "verify", "disasm"}) {
      ToolResult r = runSpyre({cmd, "prog.spyre"}, dir);
      EXPECT_EQ(r.exitCode, 1) << cmd << ": " << r.err;
      EXPECT_EQ(firstLine(r.err), c.message) << cmd;
      EXPECT_EQ(r.out, "") << cmd;
    }
  }
}

/// Every file under `dir`, recursively.
std::vector<std::string> filesUnder(const std::string &dir) {
  std::vector<std::string> out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TensorNames, ProgramWhoseTensorNameIsNoFileNameIsRefusedAtLoad) {
  struct Case {
    std::string name;
    std::string shown;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"../../x", "../../x", "the name holds '/', so it is not a plain file name"},
      {"a/b", "a/b", "the name holds '/', so it is not a plain file name"},
      {"..", "..", "'..' is not a plain file name"},
      {"", "", "the name is empty"},
      {"y\nz", "y\\x0az", "the name holds a control character"},
      {std::string(251, 'n'), std::string(251, 'n'),
       "the name is 251 bytes long, more than the 250 of a file name"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.shown);
    const std::string root = makeTempDir();
    const std::string dir = root + "/work";
    fs::create_directories(dir + "/in/sub");
    writeFileAtomic(dir + "/in/a.npy", "");
    writeFileAtomic(dir + "/prog.spyre", programWithNames("a", c.name));
    std::vector<std::string> before = filesUnder(root);
    for (const std::vector<std::string> &args :
         {std::vector<std::string>{"sim", "prog.spyre", "--inputs", "in",
                                   "--outputs", "in/sub"},
          std::vector<std::string>{"verify", "prog.spyre"},
          std::vector<std::string>{"disasm", "prog.spyre"}}) {
      ToolResult r = runSpyre(args, dir);
      EXPECT_EQ(r.exitCode, 1) << r.err;
      EXPECT_EQ(firstLine(r.err), "prog.spyre: error: section 'TENS': output "
                                  "tensor '" +
                                      c.shown + "': " + c.why +
                                      (c.why.find("file name") !=
                                               std::string::npos
                                           ? " (inputs and outputs are read "
                                             "and written as files NAME.npy)"
                                           : ""));
    }
    EXPECT_EQ(filesUnder(root), before);
  }
  // The same for an input: `--inputs` would read from outside its folder.
  const std::string dir = makeTempDir();
  writeFileAtomic(dir + "/prog.spyre", programWithNames("../a", "y"));
  ToolResult r = runSpyre({"sim", "prog.spyre", "--inputs", "."}, dir);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err).rfind("prog.spyre: error: section 'TENS': input "
                                   "tensor '../a': the name holds '/'",
                                   0),
            0u)
      << r.err;
}

/// Runs `spyre args` with standard output on /dev/full.
ToolResult toDevFull(const std::string &args) {
  const std::string dir = makeTempDir();
  const std::string cmd = "cd '" + srcPath("") + "' && '" + SPYRE_BIN + "' " +
                          args + " > /dev/full 2> '" + dir + "/err'";
  int status = std::system(cmd.c_str());
  ToolResult r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  std::ifstream in(dir + "/err");
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

TEST(StandardOutput, AFullDeviceFailsTheCommand) {
  if (!fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  const std::string prog = makeTempDir() + "/dma_copy.spyre";
  ASSERT_EQ(runSpyre({"asm", "examples/asm/dma_copy.s", "-o", prog}).exitCode, 0);
  for (const std::string &args :
       {"disasm '" + prog + "'", std::string("config show"),
        "verify '" + prog + "'", std::string("dlf16 1.5"), std::string("--help"),
        std::string("graph print examples/models/mlp_block/model.json"),
        std::string("sim --help")}) {
    SCOPED_TRACE(args);
    ToolResult r = toDevFull(args);
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_EQ(firstLine(r.err).rfind("spyre: error: cannot write standard output",
                                     0),
              0u)
        << r.err;
  }
}

TEST(OutputIsInput, AHardLinkOrAnotherSpellingOfTheInputIsRefused) {
  const std::string dir = makeTempDir();
  writeFileAtomic(dir + "/a.s",
                  readFile(srcPath("examples/asm/dma_copy.s"), kAssemblyLimit));
  const std::string source = readFile(dir + "/a.s", kAssemblyLimit);
  ASSERT_EQ(::link((dir + "/a.s").c_str(), (dir + "/linked.s").c_str()), 0);
  fs::create_directories(dir + "/sub");
  for (const std::string out : {"a.s", "./a.s", "sub/../a.s", "linked.s"}) {
    SCOPED_TRACE(out);
    ToolResult r = runSpyre({"asm", "a.s", "-o", out}, dir);
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_EQ(firstLine(r.err).rfind(out + ": error: is ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("would replace it"), std::string::npos) << r.err;
    EXPECT_EQ(readFile(dir + "/a.s", kAssemblyLimit), source);
  }
  // A symlink to the input is the input too.
  fs::create_symlink("a.s", dir + "/alias.s");
  EXPECT_EQ(runSpyre({"asm", "a.s", "-o", "alias.s"}, dir).exitCode, 2);
  EXPECT_EQ(readFile(dir + "/a.s", kAssemblyLimit), source);
  // /dev/null may be named for both: nothing is lost.
  EXPECT_EQ(runSpyre({"asm", "a.s", "-o", "a.spyre"}, dir).exitCode, 0);
  EXPECT_EQ(runSpyre({"disasm", "a.spyre", "-o", "/dev/null"}, dir).exitCode, 0);
}

TEST(InputFiles, DevicesAndPipesAreRefusedOrBounded) {
  // A config is small: /dev/zero fails after its first MiB, at once.
  auto start = std::chrono::steady_clock::now();
  ToolResult r = runSpyre({"config", "check", "/dev/zero"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err),
            "/dev/zero: error: holds more than the 1 MiB a config may have");
  // Formats with a large limit refuse anything but a regular file.
  r = runSpyre({"sim", "/dev/zero"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err), "/dev/zero: error: not a regular file (a device, "
                              "pipe or socket); a program file must be a file");
  const std::string dir = makeTempDir();
  ASSERT_EQ(::mkfifo((dir + "/model.onnx").c_str(), 0600), 0);
  r = runSpyre({"graph", "check", "model.onnx"}, dir);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(firstLine(r.err), "model.onnx: error: not a regular file (a device, "
                              "pipe or socket); an ONNX file must be a file");
}

TEST(FileLimits, AFileLargerThanItsFormatAllowsIsRefused) {
  const std::string dir = makeTempDir();
  {
    std::ofstream out(dir + "/big.yaml");
    out << "# " << std::string(kMiB, 'x') << "\n";
  }
  try {
    readFile(dir + "/big.yaml", kConfigFileLimit);
    FAIL() << "read a file over the limit";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              dir + "/big.yaml: error: is 1048579 bytes, more than the "
                    "1 MiB a config may have");
  }
  EXPECT_EQ(readFile(dir + "/big.yaml", kTextFileLimit).size(), kMiB + 3);
}

TEST(HostMemory, ARunThatCannotFitIsRefusedNamingTheTensor) {
  const std::string dir = makeTempDir();
  std::ofstream(dir + "/m.json") << R"({
  "format": "spyre-graph", "version": 1, "name": "m",
  "inputs": [{"name": "big", "dtype": "f32", "shape": [1048576, 1048576]}],
  "outputs": ["y"],
  "ops": [{"name": "r", "op": "relu", "inputs": ["big"], "outputs": ["y"]}]
})";
  ToolResult r = runSpyre({"graph", "eval", "m.json", "--seed", "1",
                           "--outputs", "out"},
                          dir);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(firstLine(r.err).rfind("m.json: error: the run needs 24 TiB of host "
                                   "memory, more than the ",
                                   0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("(tensor 'big' alone takes 16 TiB)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));

  // A few hundred bytes of program that declare a 128 GB output.
  std::ofstream(dir + "/big.s") << R"(.program "big"
.tensor output y dl16 [1000000, 64000] @ 0x0
.core 0
.engine dma.load
    halt
)";
  ASSERT_EQ(runSpyre({"asm", "big.s", "-o", "big.spyre"}, dir).exitCode, 0);
  r = runSpyre({"sim", "big.spyre", "--outputs", "out"}, dir);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(firstLine(r.err).rfind("big.spyre: error: the run needs 477 GiB of "
                                   "host memory, more than the ",
                                   0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("(tensor 'y' alone takes 477 GiB)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // Timing needs no numbers, and so no host copy of the tensors.
  EXPECT_EQ(runSpyre({"sim", "big.spyre", "--timing-only"}, dir).exitCode, 0);
}

} // namespace
} // namespace spyre::test
