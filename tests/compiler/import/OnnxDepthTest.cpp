// An ONNX model is protobuf, and its graphs nest: an `If` node's branches
// are graphs whose nodes may be `If`s again. A model nested thousands deep
// must be refused with a located error, never recursed into until the
// stack overflows (issue class: every parser that recurses has a depth
// limit). The fuzz target's depth-bomb seed (tests/fuzz/README.md) replays
// the same shape under the sanitizers.
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

namespace spyre {
namespace {

/// A model whose graph holds one `If` whose then-branch holds one `If`...
/// `levels` deep.
std::string nestedIfModel(int levels) {
  onnx::GraphProto graph;
  graph.set_name("g");
  for (int i = 0; i < levels; ++i) {
    onnx::GraphProto outer;
    outer.set_name("g");
    onnx::NodeProto *node = outer.add_node();
    node->set_op_type("If");
    onnx::AttributeProto *branch = node->add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    *branch->mutable_g() = std::move(graph);
    graph = std::move(outer);
  }
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  *model.mutable_graph() = std::move(graph);
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  // Freed level by level rather than by the recursive destructor.
  onnx::GraphProto *g = model.mutable_graph();
  while (g->node_size() > 0) {
    onnx::GraphProto inner = std::move(*g->mutable_node(0)->mutable_attribute(0)->mutable_g());
    *g = std::move(inner);
  }
  return bytes;
}

TEST(OnnxDepth, ModelNestedFarPastTheLimitIsRefusedWithALocatedError) {
  const std::string dir = test::makeTempDir();
  writeFileAtomic(dir + "/deep.onnx", nestedIfModel(5000));
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"graph", "check", "deep.onnx"},
        std::vector<std::string>{"compile", "deep.onnx", "-o", "deep.spyre"},
        std::vector<std::string>{"run", "deep.onnx", "--timing-only"}}) {
    test::ToolResult r = test::runSpyre(args, dir);
    EXPECT_EQ(r.exitCode, 1) << args[0] << ": " << r.err;
    EXPECT_EQ(test::firstLine(r.err).rfind("deep.onnx: error: ", 0), 0u)
        << r.err;
  }
}

} // namespace
} // namespace spyre
