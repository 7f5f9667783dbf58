// The ONNX backend node tests as the conformance tests read them.
#include "testlib/OnnxNodeTests.h"

#include "compiler/import/Onnx.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <algorithm>
#include <set>

namespace spyre::test {

namespace fs = std::filesystem;

std::vector<fs::path> onnxNodeTestDirs() {
  std::vector<fs::path> dirs;
  if (!fs::is_directory(kOnnxNodeTests))
    return dirs;
  for (const auto &e : fs::directory_iterator(kOnnxNodeTests))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

bool isStaticEverywhere(const onnx::GraphProto &g, const std::string &name) {
  bool used = false;
  for (const onnx::NodeProto &n : g.node())
    for (int k = 0; k < n.input_size(); ++k)
      if (n.input(k) == name) {
        used = true;
        if (!compiler::isOnnxStaticInput(n.op_type(), k))
          return false;
      }
  return used;
}

bool claimsNodeTest(const onnx::ModelProto &model) {
  std::set<std::string_view> ops;
  for (std::string_view op : compiler::onnxSupportedOpTypes())
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

FrozenNodeTest freezeNodeTest(const fs::path &dir, bool &claimed) {
  FrozenNodeTest out;
  DiagnosticEngine diags;
  claimed = compiler::readOnnxModel((dir / "model.onnx").string(), out.model,
                                    diags) &&
            claimsNodeTest(out.model);
  if (!claimed)
    return out;
  fs::path data = dir / "test_data_set_0";
  onnx::GraphProto *g = out.model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (int k = 0; k < g->input_size(); ++k) {
    const onnx::ValueInfoProto &in = g->input(k);
    fs::path file = data / ("input_" + std::to_string(k) + ".pb");
    if (!isStaticEverywhere(*g, in.name())) {
      out.inputFiles.push_back(file);
      *kept.Add() = in;
      continue;
    }
    onnx::TensorProto t;
    if (!t.ParseFromString(readFile(file.string(), kTextFileLimit))) {
      out.error = file.string() + " does not parse";
      continue;
    }
    t.set_name(in.name());
    *g->add_initializer() = t;
  }
  g->mutable_input()->Swap(&kept);
  for (int j = 0; j < g->output_size(); ++j)
    out.outputFiles.push_back(data / ("output_" + std::to_string(j) + ".pb"));
  return out;
}

} // namespace spyre::test
