// The host library against the ONNX backend node tests (Debian's
// libonnx-testdata): every single-node test of an op the host runs and the
// device does not is imported (its parameter inputs frozen into
// initializers from the test data, as a deployed model has them), evaluated
// by the reference evaluator, which runs `host` ops through the host
// library, and compared with the test's expected outputs. The tests that
// cannot pass are listed with their reasons, here and in docs/onnx.md.
#include "testlib/OnnxNodeTests.h"

#include "compiler/import/Onnx.h"
#include "compiler/import/OnnxTensor.h"
#include "compiler/ref/Evaluator.h"
#include "host/HostOp.h"
#include "support/FileIO.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace fs = std::filesystem;

namespace spyre {
namespace {

/// Node tests of host ops that cannot pass, and why.
const std::map<std::string, std::string> kExcluded = {
    {"test_slice_start_out_of_bounds",
     "its result has an empty dimension ([20, 0, 5]), which the IR does not "
     "hold"},
};

bool readProto(const fs::path &path, google::protobuf::MessageLite &msg) {
  std::string bytes = readFile(path.string(), kTextFileLimit);
  return msg.ParseFromString(bytes);
}

/// Why the test failed, or "" when it passed.
std::string runNodeTest(const fs::path &dir, onnx::ModelProto model) {
  onnx::GraphProto &g = *model.mutable_graph();
  const onnx::NodeProto node = g.node(0);
  fs::path data = dir / "test_data_set_0";
  std::map<std::string, onnx::TensorProto> given;
  for (int i = 0; i < g.input_size(); ++i) {
    onnx::TensorProto t;
    if (!readProto(data / ("input_" + std::to_string(i) + ".pb"), t))
      return "input_" + std::to_string(i) + ".pb does not parse";
    given[g.input(i).name()] = t;
  }
  // Parameter inputs become initializers; the rest stay inputs.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const onnx::ValueInfoProto &in : g.input()) {
    bool param = false;
    for (int k = 0; k < node.input_size(); ++k)
      param |= node.input(k) == in.name() &&
               compiler::isHostParamInput(node.op_type(), k);
    if (!param) {
      *kept.Add() = in;
      continue;
    }
    onnx::TensorProto t = given.at(in.name());
    t.set_name(in.name());
    *g.add_initializer() = t;
  }
  *g.mutable_input() = kept;
  DiagnosticEngine diags;
  std::optional<compiler::Graph> graph =
      compiler::importOnnxModel(model, (dir / "model.onnx").string(), {}, diags);
  if (!graph)
    return "import: " + diags.diagnostics().front().message;
  compiler::ref::TensorMap inputs;
  for (const onnx::ValueInfoProto &in : g.input()) {
    std::string why;
    std::optional<compiler::OnnxTensorValues> v =
        compiler::readOnnxTensor(given.at(in.name()), why);
    if (!v)
      return "input '" + in.name() + "': " + why;
    inputs[in.name()] = {v->dims, v->values};
  }
  std::vector<compiler::ref::RefTensor> outs =
      compiler::ref::evaluateGraph(*graph, inputs);
  for (size_t i = 0; i < outs.size(); ++i) {
    onnx::TensorProto t;
    if (!readProto(data / ("output_" + std::to_string(i) + ".pb"), t))
      return "output_" + std::to_string(i) + ".pb does not parse";
    std::string why;
    std::optional<compiler::OnnxTensorValues> want =
        compiler::readOnnxTensor(t, why);
    if (!want)
      return "output " + std::to_string(i) + ": " + why;
    if (outs[i].shape != want->dims && !(outs[i].shape.empty() && want->dims.empty()))
      return "output " + std::to_string(i) + " has shape " +
             compiler::shapeStr(outs[i].shape) + ", expected " +
             compiler::shapeStr(want->dims);
    for (size_t k = 0; k < want->values.size(); ++k) {
      const double got = outs[i].values[k], exp = want->values[k];
      if (std::isnan(exp) && std::isnan(got))
        continue;
      // Expected values are float32: half an ulp is 2^-24 relative.
      if (!(std::fabs(got - exp) <= 1e-6 * std::fabs(exp) + 1e-7))
        return "output " + std::to_string(i) + " element " + std::to_string(k) +
               " is " + std::to_string(got) + ", expected " + std::to_string(exp);
    }
  }
  return "";
}

TEST(HostNodeTests, HostOpsMatchTheOnnxBackendNodeTests) {
  std::vector<fs::path> dirs = test::onnxNodeTestDirs();
  ASSERT_FALSE(dirs.empty()) << test::kOnnxNodeTests << " is missing";
  std::span<const std::string_view> device = compiler::onnxSupportedOpTypes();
  size_t passed = 0, claimed = 0;
  std::map<std::string, std::string> failures;
  for (const fs::path &dir : dirs) {
    onnx::ModelProto model;
    if (!readProto(dir / "model.onnx", model))
      continue;
    const onnx::GraphProto &g = model.graph();
    if (g.node_size() != 1 || !g.node(0).domain().empty())
      continue;
    // The importer reads opsets 7 to 27.
    bool opsetOk = false;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx")
        opsetOk = o.version() >= compiler::kOnnxOldestOpset &&
                  o.version() <= compiler::kOnnxNewestOpset;
    if (!opsetOk)
      continue;
    const std::string &type = g.node(0).op_type();
    // Gather runs on the device only for ids read at run time (an embedding
    // lookup); with constant indices, as in these tests, it is the host's.
    if (!host::isHostOpType(type) ||
        (type != "Gather" &&
         std::find(device.begin(), device.end(), type) != device.end()))
      continue;
    // Float data only: the device holds DL16 and FP32.
    bool floats = true;
    for (int k = 0; k < g.node(0).input_size(); ++k)
      for (const onnx::ValueInfoProto &in : g.input())
        if (in.name() == g.node(0).input(k) &&
            !compiler::isHostParamInput(type, k))
          floats &= in.type().tensor_type().elem_type() ==
                    onnx::TensorProto::FLOAT;
    if (!floats)
      continue;
    ++claimed;
    std::string name = dir.filename().string();
    std::string failure = runNodeTest(dir, model);
    if (failure.empty()) {
      ++passed;
      EXPECT_FALSE(kExcluded.contains(name)) << name << " passes: remove its exclusion";
      continue;
    }
    failures[name] = failure;
    EXPECT_TRUE(kExcluded.contains(name)) << name << ": " << failure;
  }
  std::cout << passed << " of " << claimed << " host node tests pass\n";
  for (const auto &[name, why] : failures)
    std::cout << "  " << name << ": " << why << "\n";
  EXPECT_GE(passed, 111u);
}

} // namespace
} // namespace spyre
