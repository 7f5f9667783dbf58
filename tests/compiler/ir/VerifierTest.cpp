// The verifier on graphs broken the ways a faulty pass could break them: each
// problem is reported with the op, the operand and what was expected, never
// asserted.
#include "compiler/ir/Verifier.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

TensorType f32(Shape s) { return {ElementType::F32, std::move(s)}; }

/// x -> fc (linear) -> act (relu) -> y
std::unique_ptr<Graph> valid() {
  auto g = std::make_unique<Graph>("g");
  Value *x = g->addInput("x", f32({7, 64}));
  TensorType wt = f32({100, 64});
  Value *w = g->addConstant(
      "w", ConstantData::fromDoubles(wt, std::vector<double>(6400, 0.5)));
  Op *fc = buildOp(*g, OpKind::Linear, "fc", {x, w}, {}, {"h"});
  Op *act = buildOp(*g, OpKind::Relu, "act", {fc->result()}, {}, {"y"});
  g->setOutputs({act->result()});
  return g;
}

std::vector<std::string> errors(const Graph &g) {
  DiagnosticEngine diags;
  bool ok = verifyGraph(g, diags);
  std::vector<std::string> out;
  for (const Diagnostic &d : diags.diagnostics())
    out.push_back(d.str());
  EXPECT_EQ(ok, out.empty());
  return out;
}

TEST(Verifier, AcceptsAValidGraph) {
  EXPECT_EQ(errors(*valid()), std::vector<std::string>{});
}

TEST(Verifier, ReportsUseBeforeDefinition) {
  auto g = valid();
  g->moveOpBefore(g->findOp("act"), g->findOp("fc"));
  EXPECT_EQ(errors(*g), std::vector<std::string>{
                            "<graph g>: error: op 'act' (relu): operand 0 (x) %h is "
                            "defined later, by op 'fc' (ops must be in topological "
                            "order)"});
}

TEST(Verifier, ReportsACycle) {
  auto g = std::make_unique<Graph>("g");
  Value *x = g->addInput("x", f32({7, 64}));
  Op *a = buildOp(*g, OpKind::Relu, "a", {x});
  Op *b = buildOp(*g, OpKind::Neg, "b", {a->result()});
  Op *c = buildOp(*g, OpKind::Exp, "c", {b->result()});
  g->setOutputs({c->result()});
  // a now reads c's result: a -> c -> b -> a.
  a->setOperand(0, c->result());
  std::vector<std::string> e = errors(*g);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0], "<graph g>: error: op 'a' (relu): operand 0 (x) %c is defined "
                  "later, by op 'c' (ops must be in topological order)");
  EXPECT_EQ(e[1], "<graph g>: error: ops form a cycle: 'a' -> 'c' -> 'b' -> 'a' "
                  "(each uses a result of the next)");
}

TEST(Verifier, ReportsAnOpReadingItsOwnResult) {
  auto g = valid();
  Op *act = g->findOp("act");
  act->setOperand(0, act->result());
  std::vector<std::string> e = errors(*g);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0], "<graph g>: error: op 'act' (relu): operand 0 (x) %y is the op's "
                  "own result");
}

TEST(Verifier, ReportsAResultTypeInferenceDisagreesWith) {
  auto g = valid();
  g->findValue("h")->setType(f32({7, 99}));
  EXPECT_EQ(errors(*g),
            (std::vector<std::string>{
                "<graph g>: error: op 'fc' (linear): result 0 %h has type f32[7, 99], "
                "but linear gives f32[7, 100]",
                // act's own result no longer matches its (wrong) operand either.
                "<graph g>: error: op 'act' (relu): result 0 %y has type f32[7, 100], "
                "but relu gives f32[7, 99]"}));
}

TEST(Verifier, ReportsOperandShapeProblems) {
  auto g = valid();
  Op *sum = buildOp(*g, OpKind::Add, "sum", {g->findValue("h"), g->findValue("h")});
  g->setOutputs({sum->result()});
  sum->setOperand(1, g->findValue("x"));
  EXPECT_EQ(errors(*g), std::vector<std::string>{
                            "<graph g>: error: op 'sum' (add): shapes of a f32[7, 100] "
                            "and b f32[7, 64] do not broadcast"});
  sum->setOperands({g->findValue("h")});
  EXPECT_EQ(errors(*g), std::vector<std::string>{
                            "<graph g>: error: op 'sum' (add): expects 2 operands, as "
                            "add(a, b), got 1"});
}

TEST(Verifier, ReportsAttributeProblems) {
  auto g = valid();
  Op *sm = buildOp(*g, OpKind::Softmax, "sm", {g->findValue("y")});
  g->setOutputs({sm->result()});
  sm->attrs().erase("axis");
  sm->attrs().set("dim", 1);
  EXPECT_EQ(errors(*g), (std::vector<std::string>{
                            "<graph g>: error: op 'sm' (softmax): unknown attribute "
                            "'dim' (softmax takes axis)",
                            "<graph g>: error: op 'sm' (softmax): missing attribute "
                            "'axis' (int)"}));
  sm->attrs().erase("dim");
  sm->attrs().set("axis", 5);
  EXPECT_EQ(errors(*g), std::vector<std::string>{
                            "<graph g>: error: op 'sm' (softmax): axis 5 is out of "
                            "range for x f32[7, 100]"});
}

TEST(Verifier, ReportsOutputProblems) {
  auto g = valid();
  g->setOutputs({});
  EXPECT_EQ(errors(*g),
            std::vector<std::string>{"<graph g>: error: the graph has no outputs"});
  g->setOutputs({g->findValue("y"), g->findValue("y")});
  EXPECT_EQ(errors(*g), std::vector<std::string>{
                            "<graph g>: error: output 1 %y is listed twice"});
}

TEST(Verifier, ReportsValuesFromAnotherGraph) {
  auto g = valid();
  auto other = valid();
  g->findOp("act")->setOperand(0, other->findValue("h"));
  g->setOutputs({other->findValue("x")});
  EXPECT_EQ(errors(*g), (std::vector<std::string>{
                            "<graph g>: error: op 'act' (relu): operand 0 (x) %h is not "
                            "a value of this graph",
                            "<graph g>: error: output 0 %x is not a value of this "
                            "graph"}));
}

TEST(Verifier, PointsAtTheOpsSourceLocation) {
  auto g = valid();
  g->findOp("act")->setLoc(SourceLoc{"model.json", 0, 0, "ops[1]"});
  g->findOp("fc")->setLoc(SourceLoc{"model.ir", 4, 3});
  g->findValue("y")->setType(f32({1}));
  g->findValue("h")->setType(f32({2}));
  EXPECT_EQ(errors(*g),
            (std::vector<std::string>{
                "model.ir:4:3: error: op 'fc' (linear): result 0 %h has type f32[2], "
                "but linear gives f32[7, 100]",
                "model.json: error: at 'ops[1]': op 'act' (relu): result 0 %y has "
                "type f32[1], but relu gives f32[2]"}));
}

} // namespace
} // namespace spyre::compiler
