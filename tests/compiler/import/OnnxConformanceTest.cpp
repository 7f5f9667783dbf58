// The ONNX backend node tests shipped by Debian's libonnx-testdata: every
// test whose ops the importer claims, with float data inputs and static
// shapes, is imported and run on the reference evaluator with the test's
// inputs, and its outputs compared with the test's (1e-4 relative plus 1e-5
// absolute). Inputs the importer reads as static parameters (Reshape's
// shape, axes, split sizes, Pow's exponent, Where's condition) are frozen
// into initializers from the test's data first, as a deployed model has
// them. A claimed test that does not import is listed, with the importer's
// reason, in the conformance table of docs/onnx.md; this test checks that
// table (SPYRE_UPDATE_GOLDEN=1 rewrites it).
#include "compiler/import/Onnx.h"
#include "compiler/import/OnnxTensor.h"
#include "compiler/ref/Evaluator.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/OnnxNodeTests.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace spyre::compiler {
namespace {

namespace fs = std::filesystem;

const char *const kBegin = "<!-- BEGIN ONNX CONFORMANCE: checked by "
                           "tests/compiler/import/OnnxConformanceTest.cpp -->";
const char *const kEnd = "<!-- END ONNX CONFORMANCE -->";

struct Outcome {
  std::string name;
  bool imported = false;
  std::string reason;   ///< why it did not import
  std::string mismatch; ///< the first wrong output value, if any
};

std::optional<OnnxTensorValues> readPb(const std::string &path) {
  onnx::TensorProto t;
  if (!t.ParseFromString(readFile(path, kTextFileLimit)))
    return std::nullopt;
  std::string why;
  return readOnnxTensor(t, why);
}

ref::RefTensor toRef(const OnnxTensorValues &v) {
  return ref::RefTensor{Shape(v.dims.begin(), v.dims.end()), v.values};
}

/// Imports and runs one node test; nullopt when the importer does not
/// claim it.
std::optional<Outcome> runNodeTest(const fs::path &dir) {
  bool claimed = false;
  test::FrozenNodeTest frozen = test::freezeNodeTest(dir, claimed);
  if (!claimed)
    return std::nullopt;
  Outcome out{dir.filename().string()};
  EXPECT_EQ(frozen.error, "") << dir;
  const onnx::ModelProto &model = frozen.model;
  ref::TensorMap inputs;
  for (int k = 0; k < model.graph().input_size(); ++k) {
    const std::string file = frozen.inputFiles[static_cast<size_t>(k)].string();
    std::optional<OnnxTensorValues> v = readPb(file);
    EXPECT_TRUE(v.has_value()) << file;
    if (v)
      inputs[model.graph().input(k).name()] = toRef(*v);
  }

  DiagnosticEngine diags;
  std::optional<Graph> graph =
      importOnnxModel(model, out.name + "/model.onnx", {}, diags);
  if (!graph) {
    const Diagnostic &d = diags.diagnostics().front();
    out.reason = d.message;
    return out;
  }
  out.imported = true;
  std::vector<ref::RefTensor> results = ref::evaluateGraph(*graph, inputs);
  for (size_t j = 0; j < results.size() && out.mismatch.empty(); ++j) {
    std::string file = frozen.outputFiles[j].string();
    std::optional<OnnxTensorValues> want = readPb(file);
    if (!want) {
      out.mismatch = file + " does not read";
      break;
    }
    if (results[j].shape != Shape(want->dims.begin(), want->dims.end())) {
      out.mismatch = "output " + std::to_string(j) + " has shape " +
                     shapeStr(results[j].shape) + ", expected " +
                     shapeStr(Shape(want->dims.begin(), want->dims.end()));
      break;
    }
    for (size_t i = 0; i < want->values.size(); ++i) {
      double a = results[j].values[i], b = want->values[i];
      bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                  std::fabs(a - b) <= 1e-4 * std::fabs(b) + 1e-5;
      if (!same) {
        out.mismatch = "output " + std::to_string(j) + " element " +
                       std::to_string(i) + " is " + std::to_string(a) +
                       ", expected " + std::to_string(b);
        break;
      }
    }
  }
  return out;
}

std::string escapeCell(std::string text) {
  std::string out;
  for (char c : text)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

TEST(OnnxConformance, ClaimedNodeTestsPassOrAreListedInTheDocs) {
  ASSERT_TRUE(fs::is_directory(test::kOnnxNodeTests))
      << test::kOnnxNodeTests
      << " is missing: install libonnx-testdata (scripts/install-deps.sh)";
  std::vector<fs::path> dirs = test::onnxNodeTestDirs();

  std::vector<Outcome> outcomes;
  for (const fs::path &dir : dirs)
    if (std::optional<Outcome> o = runNodeTest(dir))
      outcomes.push_back(std::move(*o));

  size_t passed = 0;
  std::string table;
  for (const Outcome &o : outcomes) {
    EXPECT_EQ(o.mismatch, "") << o.name;
    if (o.imported) {
      passed += o.mismatch.empty() ? 1 : 0;
      continue;
    }
    table += "| `" + o.name + "` | " + escapeCell(o.reason) + " |\n";
  }
  // A healthy share of what is claimed must work; the rest is documented.
  EXPECT_GE(passed, 140u);

  std::string block = std::string(kBegin) + "\n\n" + std::to_string(passed) +
                      " of the " + std::to_string(outcomes.size()) +
                      " claimed node tests pass. The others do not import:\n\n"
                      "| test | reason |\n|---|---|\n" +
                      table + "\n" + kEnd;
  std::string doc = spyre::test::readSource("docs/onnx.md");
  size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos)
      << "docs/onnx.md lacks the conformance markers";
  ASSERT_NE(end, std::string::npos)
      << "docs/onnx.md lacks the conformance markers";
  std::string committed =
      doc.substr(begin, end + std::string(kEnd).size() - begin);
  const char *update = std::getenv("SPYRE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1" && committed != block) {
    doc.replace(begin, committed.size(), block);
    writeFileAtomic(spyre::test::srcPath("docs/onnx.md"), doc);
    return;
  }
  EXPECT_EQ(committed, block)
      << "docs/onnx.md's conformance table is stale (SPYRE_UPDATE_GOLDEN=1 "
         "rewrites it; read the diff)";
}

} // namespace
} // namespace spyre::compiler
