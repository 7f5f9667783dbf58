// The Graph data structure: building, editing, uses, cloning, comparison and
// constant data.
#include "compiler/ir/Graph.h"
#include "compiler/ir/Printer.h"
#include "compiler/ir/Verifier.h"
#include "testlib/RandomGraph.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

TensorType f32(Shape s) { return {ElementType::F32, std::move(s)}; }

ConstantDataPtr ones(Shape shape) {
  TensorType t = f32(std::move(shape));
  return ConstantData::fromDoubles(t, std::vector<double>(static_cast<size_t>(t.elementCount()), 1.0));
}

/// x -> linear -> relu -> y.
std::unique_ptr<Graph> small() {
  auto g = std::make_unique<Graph>("small");
  Value *x = g->addInput("x", f32({7, 64}));
  Value *w = g->addConstant("w", ones({100, 64}));
  Op *fc = buildOp(*g, OpKind::Linear, "fc", {x, w}, {}, {"h"});
  Op *act = buildOp(*g, OpKind::Relu, "act", {fc->result()}, {}, {"y"});
  g->setOutputs({act->result()});
  return g;
}

TEST(Graph, BuildOpInfersTypesAndFillsDefaults) {
  auto g = small();
  Op *fc = g->findOp("fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->result()->type(), f32({7, 100}));
  EXPECT_EQ(fc->result()->definingOp(), fc);
  Op *sm = buildOp(*g, OpKind::Softmax, "sm", {fc->result()});
  EXPECT_EQ(sm->attrs().str(), "{axis = -1}");
  // A missing result name is derived from the op name.
  EXPECT_EQ(sm->result()->name(), "sm");
  Op *sp = buildOp(*g, OpKind::Split, "sp", {fc->result()},
                   {{"axis", 1}, {"sizes", Attribute::ints({50, 50})}});
  EXPECT_EQ(sp->result(0)->name(), "sp.0");
  EXPECT_EQ(sp->result(1)->name(), "sp.1");
  EXPECT_EQ(sp->result(1)->resultIndex(), 1u);
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyGraph(*g, diags)) << diags.str();
}

TEST(Graph, CountsAndFinds) {
  auto g = small();
  EXPECT_EQ(g->numInputs(), 1u);
  EXPECT_EQ(g->numConstants(), 1u);
  EXPECT_EQ(g->numOps(), 2u);
  EXPECT_EQ(g->numValues(), 4u);
  EXPECT_EQ(g->parameterBytes(), 100 * 64 * 4);
  EXPECT_EQ(g->findValue("h")->definingOp(), g->findOp("fc"));
  EXPECT_EQ(g->findValue("nope"), nullptr);
  EXPECT_TRUE(g->isOutput(g->findValue("y")));
  EXPECT_EQ(g->opIndex(g->findOp("act")), 1u);
}

TEST(Graph, UsesAndReplaceAllUses) {
  auto g = small();
  Value *h = g->findValue("h");
  std::vector<OpUse> uses = g->usesOf(h);
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0].op->name(), "act");
  EXPECT_EQ(uses[0].operandIndex, 0u);

  // Insert a neg between fc and act, then route act (and the output) to it.
  Op *neg = buildOp(*g, OpKind::Neg, "neg", {h}, {}, {"n"}, g->findOp("act"));
  g->findOp("act")->setOperand(0, neg->result());
  EXPECT_EQ(g->opIndex(neg), 1u);
  EXPECT_EQ(g->usesOf(h).size(), 1u);
  g->replaceAllUsesWith(g->findValue("y"), neg->result());
  EXPECT_EQ(g->outputs().front(), neg->result());
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyGraph(*g, diags)) << diags.str();
}

TEST(Graph, EraseAndMoveOps) {
  auto g = small();
  Op *extra = buildOp(*g, OpKind::Exp, "extra", {g->findValue("h")});
  EXPECT_EQ(g->numOps(), 3u);
  g->eraseOp(extra);
  EXPECT_EQ(g->numOps(), 2u);
  EXPECT_EQ(g->findOp("extra"), nullptr);
  EXPECT_EQ(g->findValue("extra"), nullptr);

  Op *act = g->findOp("act");
  g->moveOpBefore(act, g->findOp("fc"));
  EXPECT_EQ(g->opIndex(act), 0u);
  g->moveOpBefore(act, nullptr);
  EXPECT_EQ(g->opIndex(act), 1u);

  Value *unused = g->addConstant("unused", ones({3}));
  g->eraseConstant(unused);
  EXPECT_EQ(g->numConstants(), 1u);
}

TEST(Graph, UseListsFollowEveryEdit) {
  auto g = small();
  Value *h = g->findValue("h");
  Value *y = g->findValue("y");
  // Uses come in op order, operands in order within an op, whatever the
  // order of the edits that made them.
  Op *add = buildOp(*g, OpKind::Add, "add", {h, h}, {}, {"s"});
  Op *neg = buildOp(*g, OpKind::Neg, "neg", {y}, {}, {"n"}, g->findOp("act"));
  neg->setOperand(0, h);
  std::vector<OpUse> uses = g->usesOf(h);
  ASSERT_EQ(uses.size(), 4u);
  EXPECT_EQ(uses[0].op, neg);
  EXPECT_EQ(uses[1].op, g->findOp("act"));
  EXPECT_EQ(uses[2].op, add);
  EXPECT_EQ(uses[2].operandIndex, 0u);
  EXPECT_EQ(uses[3].operandIndex, 1u);
  EXPECT_EQ(g->numUses(y), 0u);
  g->replaceAllUsesWith(h, y);
  EXPECT_EQ(g->numUses(h), 0u);
  EXPECT_EQ(g->numUses(y), 4u);
  add->setOperands({y, g->findValue("n")});
  EXPECT_EQ(g->numUses(y), 3u);
  EXPECT_EQ(g->usesOf(neg->result()).front().op, add);
  g->eraseOp(add);
  EXPECT_EQ(g->numUses(y), 2u);
  EXPECT_EQ(g->numUses(neg->result()), 0u);
  // A clone has its own use lists.
  auto c = g->clone();
  EXPECT_EQ(c->numUses(c->findValue("y")), 2u);
  EXPECT_EQ(c->usesOf(c->findValue("y")).front().op, c->findOp("neg"));
}

TEST(Graph, MoveOpsBeforeMovesEachInTurn) {
  auto g = std::make_unique<Graph>("order");
  Value *x = g->addInput("x", f32({4}));
  for (const char *name : {"a", "b", "c", "d", "e"})
    buildOp(*g, OpKind::Neg, name, {x});
  auto names = [&] {
    std::string out;
    for (const Op *op : g->ops())
      out += op->name();
    return out;
  };
  g->moveOpsBefore({g->findOp("d"), g->findOp("a")}, g->findOp("c"));
  EXPECT_EQ(names(), "bdace");
  EXPECT_EQ(g->opIndex(g->findOp("a")), 2u);
  g->moveOpsBefore({g->findOp("b"), g->findOp("e")}, nullptr);
  EXPECT_EQ(names(), "dacbe");
  for (size_t i = 0; i < g->numOps(); ++i)
    EXPECT_EQ(g->opIndex(g->ops()[i]), i);
  // Positions stay right through inserts and moves in the middle.
  buildOp(*g, OpKind::Neg, "f", {x}, {}, {}, g->findOp("c"));
  g->moveOpBefore(g->findOp("d"), nullptr);
  EXPECT_EQ(names(), "afcbed");
  for (size_t i = 0; i < g->numOps(); ++i)
    EXPECT_EQ(g->opIndex(g->ops()[i]), i);
}

TEST(Graph, UniqueNamesAreDeterministic) {
  auto g = small();
  EXPECT_EQ(g->uniqueValueName("z"), "z");
  EXPECT_EQ(g->uniqueValueName("h"), "h.1");
  buildOp(*g, OpKind::Neg, "n", {g->findValue("h")}, {}, {"h.1"});
  EXPECT_EQ(g->uniqueValueName("h"), "h.2");
  EXPECT_EQ(g->uniqueOpName("fc"), "fc.1");
}

TEST(Graph, SnapshotsAllowEditingWhileWalking) {
  auto g = small();
  for (Op *op : g->ops())
    buildOp(*g, OpKind::Abs, op->name() + ".abs", {op->result()}, {}, {},
            g->nextOp(op));
  std::vector<std::string> order;
  for (const Op *op : g->ops())
    order.push_back(op->name());
  EXPECT_EQ(order, (std::vector<std::string>{"fc", "fc.abs", "act", "act.abs"}));
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyGraph(*g, diags)) << diags.str();
}

TEST(Graph, MoveKeepsEverythingAndRepointsOps) {
  auto g = small();
  g->setSourceFile("model.json");
  Graph moved(std::move(*g));
  EXPECT_EQ(moved.sourceFile(), "model.json");
  EXPECT_EQ(graphLoc(moved).file, "model.json");
  Graph assigned("other");
  assigned = std::move(moved);
  EXPECT_EQ(assigned.sourceFile(), "model.json");
  // Positions and use lists answer for the graph the ops now live in.
  Op *act = assigned.findOp("act");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(assigned.opIndex(act), 1u);
  EXPECT_EQ(assigned.usesOf(assigned.findValue("h")).size(), 1u);
  DiagnosticEngine diags;
  EXPECT_TRUE(verifyGraph(assigned, diags)) << diags.str();
}

TEST(Graph, CloneIsEqualAndIndependent) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    auto g = test::randomGraph(seed);
    auto c = g->clone();
    EXPECT_EQ(graphDifference(*g, *c), "") << "seed " << seed;
    EXPECT_EQ(printGraph(*g), printGraph(*c));
  }
  auto g = small();
  auto c = g->clone();
  c->findOp("fc")->annotations().set("cores", 32);
  EXPECT_TRUE(g->findOp("fc")->annotations().empty());
  EXPECT_EQ(graphDifference(*g, *c),
            "op 0 'fc': annotations {} vs {cores = 32}");
  EXPECT_EQ(&c->findValue("w")->constantData(), &g->findValue("w")->constantData())
      << "constant data is shared, not copied";
}

TEST(Graph, DifferenceNamesTheFirstMismatch) {
  auto a = small(), b = small();
  EXPECT_EQ(graphDifference(*a, *b), "");
  b->findOp("act")->attrs().set("x", 1);
  EXPECT_EQ(graphDifference(*a, *b), "op 1 'act': attributes {} vs {x = 1}");
  auto c = small();
  c->findValue("y")->annotations().set("layout", "row");
  EXPECT_EQ(graphDifference(*a, *c),
            "op 1 'act': result 0: value %y: annotations {} vs {layout = \"row\"}");
  auto d = small();
  d->setName("other");
  EXPECT_EQ(graphDifference(*a, *d), "graph names 'small' vs 'other'");
}

TEST(ConstantData, ConvertsAndDigests) {
  TensorType t{ElementType::F16, {2, 2}};
  ConstantDataPtr h = ConstantData::fromDoubles(t, {1.0, -2.5, 65504.0, 0.1});
  EXPECT_EQ(h->bytes().size(), 8u);
  EXPECT_EQ(h->element(1), -2.5);
  EXPECT_EQ(h->element(2), 65504.0);
  // 0.1 rounds to the nearest f16, 0.0999755859375.
  EXPECT_EQ(h->element(3), 0.0999755859375);

  TensorType i8{ElementType::I8, {3}};
  ConstantDataPtr c = ConstantData::fromDoubles(i8, {-128, 0, 127});
  EXPECT_EQ(c->toDoubles(), (std::vector<double>{-128, 0, 127}));

  // Same bytes, different shape: different digest.
  ConstantDataPtr a = ConstantData::create(f32({4}), std::string(16, '\0'));
  ConstantDataPtr b = ConstantData::create(f32({2, 2}), std::string(16, '\0'));
  EXPECT_NE(a->digest(), b->digest());
  EXPECT_EQ(a->digest(), ConstantData::create(f32({4}), std::string(16, '\0'))->digest());
  NpyArray npy = b->toNpy();
  EXPECT_EQ(npy.shape, (Shape{2, 2}));
  EXPECT_EQ(ConstantData::fromNpy(npy)->digest(), b->digest());
}

TEST(Types, ShapesAndBroadcasting) {
  EXPECT_EQ(f32({3, 64}).str(), "f32[3, 64]");
  EXPECT_EQ(f32({}).str(), "f32[]");
  EXPECT_EQ(f32({}).elementCount(), 1);
  EXPECT_EQ((TensorType{ElementType::F16, {3, 5}}).byteSize(), 30);
  EXPECT_EQ(checkShape({3, 0}), "dimension 1 is 0; every dimension must be at least 1");
  EXPECT_EQ(checkShape({1 << 20, 1 << 20, 2}), "shape [1048576, 1048576, 2] has more than 2^40 elements");
  EXPECT_EQ(checkShape(Shape(17, 1)), "rank 17 exceeds the limit of 16");
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(3, 3), std::nullopt);
  EXPECT_EQ(normalizeAxis(-4, 3), std::nullopt);
  EXPECT_EQ(broadcastShapes({7, 1, 5}, {3, 1}), (Shape{7, 3, 5}));
  EXPECT_EQ(broadcastShapes({2}, {3}), std::nullopt);
  EXPECT_EQ(parseElementType("f16"), ElementType::F16);
  EXPECT_EQ(parseElementType("float32"), std::nullopt);
}

} // namespace
} // namespace spyre::compiler
