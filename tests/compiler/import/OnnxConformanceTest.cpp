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

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace spyre::compiler {
namespace {

namespace fs = std::filesystem;

const char *const kNodeTests = "/usr/share/libonnx-testdata/data/node";
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
  if (!t.ParseFromString(readFile(path)))
    return std::nullopt;
  std::string why;
  return readOnnxTensor(t, why);
}

bool isStaticEverywhere(const onnx::GraphProto &g, const std::string &name) {
  bool used = false;
  for (const onnx::NodeProto &n : g.node())
    for (int k = 0; k < n.input_size(); ++k)
      if (n.input(k) == name) {
        used = true;
        if (!isOnnxStaticInput(n.op_type(), k))
          return false;
      }
  return used;
}

/// Whether the importer claims the test: every op supported, and every
/// input that stays an input a float tensor with a static shape.
bool claims(const onnx::ModelProto &model) {
  std::set<std::string_view> ops;
  for (std::string_view op : onnxSupportedOpTypes())
    ops.insert(op);
  const onnx::GraphProto &g = model.graph();
  for (const onnx::NodeProto &n : g.node())
    if (!(n.domain().empty() || n.domain() == "ai.onnx") ||
        !ops.contains(n.op_type()))
      return false;
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (isStaticEverywhere(g, in.name()))
      continue;
    if (!in.type().has_tensor_type())
      return false;
    int32_t t = in.type().tensor_type().elem_type();
    if (t != onnx::TensorProto::FLOAT && t != onnx::TensorProto::FLOAT16)
      return false;
    for (const auto &d : in.type().tensor_type().shape().dim())
      if (!d.has_dim_value())
        return false;
  }
  return true;
}

ref::RefTensor toRef(const OnnxTensorValues &v) {
  return ref::RefTensor{Shape(v.dims.begin(), v.dims.end()), v.values};
}

/// Imports and runs one node test; nullopt when the importer does not
/// claim it.
std::optional<Outcome> runNodeTest(const fs::path &dir) {
  onnx::ModelProto model;
  DiagnosticEngine readDiags;
  if (!readOnnxModel((dir / "model.onnx").string(), model, readDiags) ||
      !claims(model))
    return std::nullopt;
  Outcome out{dir.filename().string()};
  fs::path data = dir / "test_data_set_0";
  onnx::GraphProto *g = model.mutable_graph();
  ref::TensorMap inputs;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (int k = 0; k < g->input_size(); ++k) {
    const onnx::ValueInfoProto &in = g->input(k);
    std::string file = (data / ("input_" + std::to_string(k) + ".pb")).string();
    onnx::TensorProto t;
    EXPECT_TRUE(t.ParseFromString(readFile(file))) << file;
    if (isStaticEverywhere(*g, in.name())) {
      t.set_name(in.name());
      *g->add_initializer() = t;
      continue;
    }
    std::string why;
    std::optional<OnnxTensorValues> v = readOnnxTensor(t, why);
    EXPECT_TRUE(v.has_value()) << file << ": " << why;
    if (v)
      inputs[in.name()] = toRef(*v);
    *kept.Add() = in;
  }
  g->mutable_input()->Swap(&kept);

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
    std::string file =
        (data / ("output_" + std::to_string(j) + ".pb")).string();
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
  ASSERT_TRUE(fs::is_directory(kNodeTests))
      << kNodeTests
      << " is missing: install libonnx-testdata (scripts/install-deps.sh)";
  std::vector<fs::path> dirs;
  for (const auto &e : fs::directory_iterator(kNodeTests))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

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
