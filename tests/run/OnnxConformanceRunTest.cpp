// The ONNX backend node tests on the device: every node test the importer
// claims (tests/testlib/OnnxNodeTests.h) goes through `spyre run --check`'s
// library path (run::runModel) as a user would run it, with the test's
// model (static inputs frozen into initializers) and its test-data folder
// (input_N.pb, output_N.pb), compiled at -O2 and simulated with numerics and
// the schedule checks. A test passes when every output is within the
// documented DL16 tolerance of the test's expected output (docs/run.md) and
// the simulator reports nothing. Tests that do not import are listed by the
// host-reference conformance test; every imported test must pass here, and
// the count and any exclusion are kept in docs/onnx.md (checked here,
// rewritten with SPYRE_UPDATE_GOLDEN=1).
#include "compiler/import/Onnx.h"
#include "run/RunModel.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/OnnxNodeTests.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

namespace spyre::run {
namespace {

namespace fs = std::filesystem;

const char *const kBegin = "<!-- BEGIN ONNX CONFORMANCE ON DEVICE: checked by "
                           "tests/run/OnnxConformanceRunTest.cpp -->";
const char *const kEnd = "<!-- END ONNX CONFORMANCE ON DEVICE -->";

/// Node tests whose expected outputs DL16 cannot give, with the reason.
/// Each must fail here (a passing one is a stale entry).
const std::map<std::string, std::string> kExcluded = {
    {"test_softmax_large_number",
     "the inputs 10000 to 10003 are one DL16 value (its spacing there is "
     "16), so the device computes four equal outputs of 0.25"},
    {"test_softmax_large_number_expanded",
     "the inputs 10000 to 10003 are one DL16 value (its spacing there is "
     "16), so the device computes four equal outputs of 0.25"},
};

struct Outcome {
  std::string name;
  std::string failure; ///< empty when it passed
};

/// Whether the frozen model imports (the host-reference test lists those
/// that do not, with the reason).
bool imports(const test::FrozenNodeTest &t) {
  DiagnosticEngine diags;
  return compiler::importOnnxModel(t.model, "model.onnx", {}, diags)
      .has_value();
}

/// Writes the frozen test as a model file and an ONNX test-data folder.
void writeFrozen(const test::FrozenNodeTest &t, const fs::path &dir) {
  fs::create_directories(dir / "data");
  std::string bytes;
  ASSERT_TRUE(t.model.SerializeToString(&bytes));
  writeFileAtomic((dir / "model.onnx").string(), bytes);
  for (size_t k = 0; k < t.inputFiles.size(); ++k)
    fs::copy_file(t.inputFiles[k],
                  dir / "data" / ("input_" + std::to_string(k) + ".pb"),
                  fs::copy_options::overwrite_existing);
  for (size_t j = 0; j < t.outputFiles.size(); ++j)
    fs::copy_file(t.outputFiles[j],
                  dir / "data" / ("output_" + std::to_string(j) + ".pb"),
                  fs::copy_options::overwrite_existing);
}

Outcome runOnDevice(const fs::path &testDir, const test::FrozenNodeTest &t,
                    const fs::path &work) {
  Outcome out{testDir.filename().string()};
  fs::path dir = work / out.name;
  writeFrozen(t, dir);
  RunOptions o;
  o.model = (dir / "model.onnx").string();
  o.inputs = (dir / "data").string();
  o.check = true;
  o.useSystemC = false;
  RunReport r;
  try {
    r = runModel(o);
  } catch (const CompileError &e) {
    out.failure = e.diagnostics();
    return out;
  } catch (const UserError &e) {
    out.failure = e.what();
    return out;
  }
  for (const OutputCheck &c : r.checks)
    if (!c.result.ok() && out.failure.empty())
      out.failure = "output '" + c.output + "': " +
                    std::to_string(c.result.outside) + " of " +
                    std::to_string(c.result.elements) +
                    " elements outside the tolerance; the worst is " +
                    std::to_string(c.got) + " where " +
                    std::to_string(c.expected) + " was expected";
  if (!r.checked && out.failure.empty())
    out.failure = "no output was checked";
  if (!r.findings.empty() && out.failure.empty())
    out.failure = "simulator finding: " + r.findings.front();
  return out;
}

std::string escapeCell(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      break;
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  return out;
}

TEST(OnnxConformanceOnDevice, ClaimedNodeTestsPassThroughSpyreRunCheck) {
  std::vector<fs::path> dirs = test::onnxNodeTestDirs();
  ASSERT_FALSE(dirs.empty())
      << test::kOnnxNodeTests
      << " is missing: install libonnx-testdata (scripts/install-deps.sh)";
  fs::path work = test::makeTempDir();
  std::vector<Outcome> outcomes;
  for (const fs::path &dir : dirs) {
    bool claimed = false;
    test::FrozenNodeTest t = test::freezeNodeTest(dir, claimed);
    if (!claimed)
      continue;
    ASSERT_EQ(t.error, "") << dir;
    if (imports(t))
      outcomes.push_back(runOnDevice(dir, t, work));
  }
  size_t passed = 0;
  std::string table;
  for (const Outcome &o : outcomes) {
    auto excluded = kExcluded.find(o.name);
    if (excluded == kExcluded.end()) {
      EXPECT_EQ(o.failure, "") << o.name;
      passed += o.failure.empty() ? 1 : 0;
      continue;
    }
    EXPECT_NE(o.failure, "") << o.name << " passes: remove its exclusion";
    table += "| `" + o.name + "` | " + escapeCell(excluded->second) + " |\n";
  }
  EXPECT_GE(passed, 140u);
  std::string block = std::string(kBegin) + "\n\n" + std::to_string(passed) +
                      " of the " + std::to_string(outcomes.size()) +
                      " node tests that import pass on the device.";
  if (!table.empty())
    block += " These are excluded, since DL16 cannot give their expected "
             "outputs:\n\n| test | reason |\n|---|---|\n" +
             table;
  block += "\n\n" + std::string(kEnd);
  std::string doc = test::readSource("docs/onnx.md");
  size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "docs/onnx.md lacks the markers";
  ASSERT_NE(end, std::string::npos) << "docs/onnx.md lacks the markers";
  std::string committed =
      doc.substr(begin, end + std::string(kEnd).size() - begin);
  const char *update = std::getenv("SPYRE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1" && committed != block) {
    doc.replace(begin, committed.size(), block);
    writeFileAtomic(test::srcPath("docs/onnx.md"), doc);
    return;
  }
  EXPECT_EQ(committed, block) << "docs/onnx.md's device conformance count is "
                                 "stale (SPYRE_UPDATE_GOLDEN=1 rewrites it)";
}

} // namespace
} // namespace spyre::run
