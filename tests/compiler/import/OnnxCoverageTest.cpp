// The coverage API: node by node, whether the importer converts an ONNX
// model's nodes and why not; nodes after an unsupported one are judged on
// their own. Models are built in memory with the ONNX protobuf classes.
#include "compiler/import/Onnx.h"
#include "testlib/Golden.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spyre::compiler {
namespace {

using onnx::TensorProto;

/// A model under construction: opset 17, float tensors.
class ModelBuilder {
public:
  ModelBuilder() {
    model_.set_ir_version(8);
    auto *opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    model_.mutable_graph()->set_name("m");
  }

  ModelBuilder &input(const std::string &name, std::vector<int64_t> dims) {
    valueInfo(model_.mutable_graph()->add_input(), name, dims);
    return *this;
  }

  ModelBuilder &output(const std::string &name, std::vector<int64_t> dims) {
    valueInfo(model_.mutable_graph()->add_output(), name, dims);
    return *this;
  }

  ModelBuilder &node(const std::string &name, const std::string &opType,
                     std::vector<std::string> inputs,
                     std::vector<std::string> outputs,
                     const std::string &domain = "") {
    onnx::NodeProto *n = model_.mutable_graph()->add_node();
    n->set_name(name);
    n->set_op_type(opType);
    n->set_domain(domain);
    for (const std::string &i : inputs)
      n->add_input(i);
    for (const std::string &o : outputs)
      n->add_output(o);
    if (!domain.empty() && !hasDomain(domain)) {
      auto *opset = model_.add_opset_import();
      opset->set_domain(domain);
      opset->set_version(1);
    }
    return *this;
  }

  /// A FLOAT initializer with its values in raw_data.
  ModelBuilder &initializer(const std::string &name, std::vector<int64_t> dims,
                            const std::vector<float> &values) {
    TensorProto *t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char *>(values.data()),
                                values.size() * sizeof(float)));
    return *this;
  }

  const onnx::ModelProto &model() const { return model_; }

private:
  static void valueInfo(onnx::ValueInfoProto *v, const std::string &name,
                        const std::vector<int64_t> &dims) {
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(TensorProto::FLOAT);
    auto *shape = t->mutable_shape();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }

  bool hasDomain(const std::string &domain) const {
    for (const auto &o : model_.opset_import())
      if (o.domain() == domain)
        return true;
    return false;
  }

  onnx::ModelProto model_;
};

std::string describe(const std::vector<OpCoverage> &coverage) {
  std::string out;
  for (const OpCoverage &c : coverage)
    out += std::to_string(c.nodeIndex) + " " + c.nodeName + " " + c.opType +
           " " + (c.supported ? "yes" : "no") +
           (c.reason.empty() ? "" : ": " + c.reason) + "\n";
  return out;
}

TEST(OnnxCoverage, ListsEveryNodeWithTheReasonItIsNotConverted) {
  ModelBuilder b;
  b.input("x", {2, 3})
      .node("act", "Relu", {"x"}, {"r"})
      .node("hs", "HardSwish", {"r"}, {"h"})
      .node("add", "Add", {"h", "x"}, {"y"})
      .node("shape", "Shape", {"x"}, {"s"})
      .output("y", {2, 3});
  DiagnosticEngine diags;
  // Without the host fallback, which would run HardSwish.
  OnnxImportOptions noFallback;
  noFallback.hostFallback = false;
  std::vector<OpCoverage> c = onnxCoverage(b.model(), "m.onnx", noFallback, diags);
  EXPECT_EQ(diags.str(), "");
  // The Add still converts: HardSwish's result stands in as an input.
  EXPECT_EQ(
      describe(c),
      "0 act Relu yes\n"
      "1 hs HardSwish no: op type 'HardSwish' is not supported (docs/onnx.md "
      "lists the supported ops)\n"
      "2 add Add yes\n"
      "3 shape Shape yes: not needed: nothing uses its results\n");

  DiagnosticEngine importDiags;
  EXPECT_FALSE(
      importOnnxModel(b.model(), "m.onnx", noFallback, importDiags).has_value());
  EXPECT_EQ(
      importDiags.str(),
      "m.onnx: error: at 'graph.node[1]': node 'hs' (HardSwish): op type "
      "'HardSwish' is not supported (docs/onnx.md lists the supported ops)\n");
}

TEST(OnnxCoverage, ResultsOfUnknownDomainsPropagate) {
  ModelBuilder b;
  b.input("x", {4})
      .node("foo", "Foo", {"x"}, {"f"}, "com.example")
      .node("neg", "Neg", {"f"}, {"y"})
      .output("y", {4});
  DiagnosticEngine diags;
  std::vector<OpCoverage> c = onnxCoverage(b.model(), "m.onnx", {}, diags);
  EXPECT_EQ(diags.str(), "");
  EXPECT_EQ(
      describe(c),
      "0 foo com.example.Foo no: op type 'Foo' of domain 'com.example' is not "
      "supported (only the default ONNX domain is)\n"
      "1 neg Neg no: input 'f' comes from node 'foo' (com.example.Foo), which "
      "is not converted\n");
}

TEST(OnnxCoverage, AFormTheDeviceRefusesRunsOnTheHost) {
  // Pow's exponent is computed: the device refuses the form, the host runs
  // the node, and the Add computing the exponent is converted for it.
  ModelBuilder b;
  b.input("x", {2, 3})
      .input("e", {3})
      .node("one_more", "Add", {"e", "e"}, {"e2"})
      .node("pow", "Pow", {"x", "e2"}, {"y"})
      .output("y", {2, 3});
  DiagnosticEngine diags;
  std::vector<OpCoverage> c = onnxCoverage(b.model(), "m.onnx", {}, diags);
  EXPECT_EQ(diags.str(), "");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(describe(c),
            "0 one_more Add yes\n"
            "1 pow Pow yes: the exponent 'e2' is not a constant; the device "
            "takes only a constant exponent with one element\n");
  EXPECT_TRUE(c[1].onHost);
  std::optional<Graph> g = importOnnxModel(b.model(), "m.onnx", {}, diags);
  ASSERT_TRUE(g.has_value()) << diags.str();
  EXPECT_EQ(g->findOp("pow")->kind(), OpKind::Host);
  EXPECT_EQ(g->findOp("one_more")->kind(), OpKind::Add);

  OnnxImportOptions noFallback;
  noFallback.hostFallback = false;
  DiagnosticEngine refused;
  EXPECT_FALSE(importOnnxModel(b.model(), "m.onnx", noFallback, refused));
  EXPECT_EQ(refused.str(),
            "m.onnx: error: at 'graph.node[1]': node 'pow' (Pow): the "
            "exponent 'e2' is not a constant; the device takes only a "
            "constant exponent with one element\n");
}

TEST(OnnxCoverage, AConstantReadAsDataAndAsAParameterKeepsItsValue) {
  // `c` becomes an IR constant for the Add (its bytes move there), then the
  // Pow reads it as its exponent.
  ModelBuilder b;
  b.input("x", {2, 3})
      .initializer("c", {}, {3.0f})
      .node("add", "Add", {"x", "c"}, {"a"})
      .node("pow", "Pow", {"a", "c"}, {"y"})
      .output("y", {2, 3});
  DiagnosticEngine diags;
  std::optional<Graph> g = importOnnxModel(b.model(), "m.onnx", {}, diags);
  ASSERT_TRUE(g.has_value()) << diags.str();
  EXPECT_EQ(g->findValue("c")->constantData().element(0), 3.0);
  const Op *pow = g->findOp("pow");
  ASSERT_NE(pow, nullptr);
  EXPECT_EQ(pow->kind(), OpKind::Pow);
  EXPECT_EQ(pow->attrs().get("exponent").asFloat(), 3.0);
}

TEST(OnnxCoverage, ShapeOnlyNodesAreNotNeeded) {
  DiagnosticEngine diags;
  OnnxImportOptions options;
  options.shapeOverrides["x"] = {3, 2, 4};
  std::vector<OpCoverage> c = onnxCoverage(
      spyre::test::srcPath("tests/data/onnx/dynamic_batch/model.onnx"), options,
      diags);
  EXPECT_EQ(diags.str(), "");
  const std::string why =
      ": not needed: its results only feed static inputs "
      "(shapes, axes, sizes) of other nodes, which are read at "
      "import time\n";
  EXPECT_EQ(describe(c), "0 shape Shape yes" + why + "1 batch Gather yes" +
                             why + "2 batch1 Unsqueeze yes" + why +
                             "3 target Concat yes" + why +
                             "4 flatten Reshape yes\n5 proj MatMul yes\n");
}

TEST(OnnxCoverage, NodesAnExporterPatternTakesToTheDeviceAreListedThere) {
  // The exported Granite layer's Slices (rotary) and Expands (repeat_kv)
  // are host op types, but the layer runs with no host op.
  DiagnosticEngine diags;
  std::vector<OpCoverage> c = onnxCoverage(
      spyre::test::srcPath("tests/data/onnx/granite_layer/model.onnx"), {},
      diags);
  EXPECT_EQ(diags.str(), "");
  int patterned = 0;
  for (const OpCoverage &n : c) {
    EXPECT_TRUE(n.supported) << n.nodeName;
    EXPECT_FALSE(n.onHost) << n.nodeName << ": " << n.reason;
    if (n.opType == "Slice" || n.opType == "Expand") {
      EXPECT_EQ(n.reason, "on the device as part of an exporter pattern "
                          "(docs/onnx.md, Language models)");
      ++patterned;
    }
  }
  EXPECT_EQ(patterned, 6);
}

TEST(OnnxCoverage, ModelLevelProblemsGiveNoList) {
  DiagnosticEngine diags;
  std::string path =
      spyre::test::srcPath("tests/data/onnx/dynamic_batch/model.onnx");
  EXPECT_TRUE(onnxCoverage(path, {}, diags).empty());
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_NE(diags.str().find("dimension 0 ('batch') is not static"),
            std::string::npos)
      << diags.str();
}

TEST(OnnxCoverage, SupportedOpTypesAreSortedAndStatic) {
  std::span<const std::string_view> types = onnxSupportedOpTypes();
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  EXPECT_EQ(types.size(), 33u);
  for (std::string_view t :
       {"MatMul", "Gemm", "LayerNormalization", "Where", "Erf"})
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
  EXPECT_TRUE(isOnnxStaticInput("Reshape", 1));
  EXPECT_FALSE(isOnnxStaticInput("Reshape", 0));
  EXPECT_TRUE(isOnnxStaticInput("Where", 0));
  EXPECT_FALSE(isOnnxStaticInput("Where", 1));
  EXPECT_FALSE(isOnnxStaticInput("HardSwish", 0));
}

} // namespace
} // namespace spyre::compiler
