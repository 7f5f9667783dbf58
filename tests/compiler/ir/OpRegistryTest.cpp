// The op registry: the table is well formed, and each op's checks and shape
// inference give what its semantics say, for sizes that are and are not
// multiples of 64.
#include "compiler/ir/OpRegistry.h"

#include <gtest/gtest.h>

#include <set>

namespace spyre::compiler {
namespace {

TensorType f32(Shape s) { return {ElementType::F32, std::move(s)}; }

struct Result {
  std::vector<TensorType> types;
  std::vector<OpIssue> issues;
  bool ok() const { return issues.empty(); }
  /// The first problem, as `target: message`.
  std::string firstIssue() const {
    if (issues.empty())
      return "";
    const OpIssue &i = issues.front();
    switch (i.target) {
    case OpIssue::Target::Operand:
      return "operand " + std::to_string(i.index) + ": " + i.message;
    case OpIssue::Target::Attr:
      return "attr " + i.attr + ": " + i.message;
    case OpIssue::Target::Result:
      return "result: " + i.message;
    case OpIssue::Target::Op:
      return "op: " + i.message;
    }
    return "";
  }
};

Result infer(std::string_view op, std::vector<TensorType> operands,
             AttrDict attrs = {}) {
  const OpDef *def = findOpDef(op);
  EXPECT_NE(def, nullptr) << op;
  Result r;
  if (!completeAttrs(*def, attrs, r.issues))
    return r;
  std::optional<std::vector<TensorType>> t = checkOp(*def, operands, attrs, r.issues);
  if (t)
    r.types = *t;
  return r;
}

TensorType inferOne(std::string_view op, std::vector<TensorType> operands,
                    AttrDict attrs = {}) {
  Result r = infer(op, std::move(operands), std::move(attrs));
  EXPECT_TRUE(r.ok()) << op << ": " << r.firstIssue();
  EXPECT_EQ(r.types.size(), 1u);
  return r.types.empty() ? TensorType{} : r.types.front();
}

// ---- The table ----

TEST(OpTable, HasOneRowPerKindInOrder) {
  ASSERT_EQ(opTable().size(), static_cast<size_t>(kNumOpKinds));
  std::set<std::string_view> names;
  for (size_t i = 0; i < opTable().size(); ++i) {
    const OpDef &d = opTable()[i];
    EXPECT_EQ(static_cast<size_t>(d.kind), i) << d.name;
    EXPECT_EQ(opKindName(d.kind), d.name);
    EXPECT_EQ(findOpDef(d.name), &d);
    EXPECT_TRUE(names.insert(d.name).second) << "duplicate " << d.name;
  }
  EXPECT_EQ(findOpDef("conv2d"), nullptr);
}

TEST(OpTable, RowsAreWellFormed) {
  for (const OpDef &d : opTable()) {
    SCOPED_TRACE(std::string(d.name));
    EXPECT_NE(d.infer, nullptr);
    EXPECT_FALSE(d.summary.empty());
    EXPECT_FALSE(d.semantics.empty());
    EXPECT_FALSE(d.resultRule.empty());
    EXPECT_NE(d.types, 0);
    ASSERT_FALSE(d.operands.empty());
    bool optionalSeen = false;
    for (size_t i = 0; i < d.operands.size(); ++i) {
      const OperandSpec &o = d.operands[i];
      EXPECT_FALSE(o.description.empty());
      if (o.arity == OperandArity::Variadic) {
        EXPECT_EQ(i + 1, d.operands.size()) << "variadic operand not last";
      }
      if (o.arity == OperandArity::Required) {
        EXPECT_FALSE(optionalSeen) << "required operand after an optional one";
      }
      optionalSeen |= o.arity == OperandArity::Optional;
    }
    std::set<std::string_view> attrNames;
    for (const AttrSpec &a : d.attrs) {
      EXPECT_TRUE(attrNames.insert(a.name).second) << a.name;
      EXPECT_FALSE(a.description.empty()) << a.name;
      if (a.defaultValue) {
        EXPECT_TRUE(attrHasType(*a.defaultValue, a.type)) << a.name;
      }
      if (!a.allowed.empty()) {
        EXPECT_EQ(a.type, AttrType::String) << a.name;
        if (a.defaultValue) {
          EXPECT_NE(std::find(a.allowed.begin(), a.allowed.end(),
                              a.defaultValue->asString()),
                    a.allowed.end());
        }
      }
    }
  }
}

TEST(OpTable, SignaturesShowOptionalAndVariadicOperands) {
  EXPECT_EQ(opDef(OpKind::Linear).signature(), "linear(x, weight, [bias])");
  EXPECT_EQ(opDef(OpKind::Concat).signature(), "concat(inputs...)");
  EXPECT_EQ(opDef(OpKind::LayerNorm).minOperands(), 1u);
  EXPECT_EQ(opDef(OpKind::LayerNorm).maxOperands(), 3u);
}

// ---- Attribute schema ----

TEST(OpSchema, FillsDefaultsAndConvertsIntsToFloats) {
  AttrDict attrs{{"exponent", 2}};
  std::vector<OpIssue> issues;
  ASSERT_TRUE(completeAttrs(opDef(OpKind::Pow), attrs, issues));
  EXPECT_EQ(attrs.get("exponent"), Attribute(2.0));

  AttrDict ln;
  ASSERT_TRUE(completeAttrs(opDef(OpKind::LayerNorm), ln, issues));
  EXPECT_EQ(ln.str(), "{axis = -1, epsilon = 1e-05}");
  AttrDict mm;
  ASSERT_TRUE(completeAttrs(opDef(OpKind::Matmul), mm, issues));
  EXPECT_EQ(mm.str(), "{transpose_a = false, transpose_b = false}");
}

TEST(OpSchema, ReportsUnknownMissingAndMistypedAttributes) {
  EXPECT_EQ(infer("gelu", {f32({3})}, {{"approx", "tanh"}}).firstIssue(),
            "attr approx: unknown attribute 'approx' (gelu takes approximate)");
  EXPECT_EQ(infer("relu", {f32({3})}, {{"axis", 1}}).firstIssue(),
            "attr axis: unknown attribute 'axis' (relu takes no attributes)");
  EXPECT_EQ(infer("transpose", {f32({3, 4})}).firstIssue(),
            "attr perm: missing attribute 'perm' (int list)");
  EXPECT_EQ(infer("softmax", {f32({3})}, {{"axis", "last"}}).firstIssue(),
            "attr axis: attribute 'axis' must be an int, got string \"last\"");
  EXPECT_EQ(infer("transpose", {f32({3, 4})}, {{"perm", Attribute::floats({1.0, 0.0})}})
                .firstIssue(),
            "attr perm: attribute 'perm' must be an int list, got float list [1.0, 0.0]");
  EXPECT_EQ(infer("gelu", {f32({3})}, {{"approximate", "fast"}}).firstIssue(),
            "attr approximate: attribute 'approximate' must be 'none' or 'tanh', "
            "got \"fast\"");
}

TEST(OpSchema, CheckOpRequiresEveryAttribute) {
  std::vector<OpIssue> issues;
  std::vector<TensorType> operands{f32({2, 2}), f32({2, 2})};
  EXPECT_FALSE(checkOp(opDef(OpKind::Matmul), operands, AttrDict{}, issues));
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues.front().message, "missing attribute 'transpose_a' (bool)");
}

TEST(OpSchema, VerifierHooksCheckValues) {
  EXPECT_EQ(infer("layernorm", {f32({4})}, {{"epsilon", -1.0}}).firstIssue(),
            "attr epsilon: epsilon must be finite and not negative, got -1.0");
  EXPECT_EQ(infer("pow", {f32({4})},
                  {{"exponent", std::numeric_limits<double>::infinity()}})
                .firstIssue(),
            "attr exponent: exponent must be finite");
}

TEST(OpSchema, ChecksOperandCountAndElementTypes) {
  EXPECT_EQ(infer("add", {f32({3})}).firstIssue(),
            "op: expects 2 operands, as add(a, b), got 1");
  EXPECT_EQ(infer("linear", {f32({3})}).firstIssue(),
            "op: expects 2 to 3 operands, as linear(x, weight, [bias]), got 1");
  EXPECT_EQ(infer("concat", {}, {{"axis", 0}}).firstIssue(),
            "op: expects 1 or more operands, as concat(inputs...), got 0");
  TensorType i32{ElementType::I32, {3}};
  EXPECT_EQ(infer("add", {i32, i32}).firstIssue(),
            "operand 0: a i32[3]: add takes f32 or f16");
  TensorType f16{ElementType::F16, {3}};
  EXPECT_EQ(infer("add", {f32({3}), f16}).firstIssue(),
            "operand 1: b f16[3] has a different element type from a f32[3]");
  TensorType i8{ElementType::I8, {2, 3}};
  EXPECT_EQ(inferOne("transpose", {i8}, {{"perm", Attribute::ints({1, 0})}}),
            (TensorType{ElementType::I8, {3, 2}}));
  EXPECT_EQ(inferOne("relu", {f16}), f16);
}

// ---- Shape inference ----

TEST(OpInference, Matmul) {
  EXPECT_EQ(inferOne("matmul", {f32({7, 77}), f32({77, 129})}), f32({7, 129}));
  EXPECT_EQ(inferOne("matmul", {f32({77, 7}), f32({129, 77})},
                     {{"transpose_a", true}, {"transpose_b", true}}),
            f32({7, 129}));
  // Batch dimensions broadcast.
  EXPECT_EQ(inferOne("matmul", {f32({2, 1, 5, 3}), f32({4, 3, 6})}),
            f32({2, 4, 5, 6}));
  EXPECT_EQ(infer("matmul", {f32({7, 64}), f32({63, 5})}).firstIssue(),
            "operand 1: contraction sizes differ: a f32[7, 64] has K = 64, b f32[63, 5] "
            "has K = 63 (transpose_a = false, transpose_b = false)");
  EXPECT_EQ(infer("matmul", {f32({2, 4, 3}), f32({3, 3, 5})}).firstIssue(),
            "operand 1: batch dimensions [2] of a and [3] of b do not broadcast");
  EXPECT_EQ(infer("matmul", {f32({64}), f32({64, 5})}).firstIssue(),
            "operand 0: a f32[64] must have rank 2 or more");
}

TEST(OpInference, Linear) {
  EXPECT_EQ(inferOne("linear", {f32({7, 100}), f32({129, 100}), f32({129})}),
            f32({7, 129}));
  EXPECT_EQ(inferOne("linear", {f32({2, 7, 100}), f32({3072, 100})}),
            f32({2, 7, 3072}));
  EXPECT_EQ(inferOne("linear", {f32({100}), f32({1, 100})}), f32({1}));
  EXPECT_EQ(infer("linear", {f32({7, 64}), f32({32, 48})}).firstIssue(),
            "operand 1: weight f32[32, 48] has 48 input features, x f32[7, 64] has 64");
  EXPECT_EQ(infer("linear", {f32({7, 64}), f32({32, 64}), f32({64})}).firstIssue(),
            "operand 2: bias f32[64] must have shape [32] (out_features)");
  EXPECT_EQ(infer("linear", {f32({7, 64}), f32({64})}).firstIssue(),
            "operand 1: weight f32[64] must be [out_features, in_features]");
}

TEST(OpInference, ElementwiseBroadcasting) {
  EXPECT_EQ(inferOne("add", {f32({7, 1, 100}), f32({3, 1})}), f32({7, 3, 100}));
  EXPECT_EQ(inferOne("div", {f32({}), f32({1000})}), f32({1000}));
  EXPECT_EQ(infer("mul", {f32({7, 64}), f32({65})}).firstIssue(),
            "operand 1: shapes of a f32[7, 64] and b f32[65] do not broadcast");
  for (const char *op : {"relu", "gelu", "silu", "sigmoid", "tanh", "exp", "sqrt",
                         "rsqrt", "reciprocal", "neg", "abs"})
    EXPECT_EQ(inferOne(op, {f32({1, 77})}), f32({1, 77})) << op;
  EXPECT_EQ(inferOne("pow", {f32({129})}, {{"exponent", 0.5}}), f32({129}));
}

TEST(OpInference, SoftmaxAndNorms) {
  EXPECT_EQ(inferOne("softmax", {f32({3, 77, 5})}, {{"axis", -2}}), f32({3, 77, 5}));
  EXPECT_EQ(infer("softmax", {f32({3, 4})}, {{"axis", 2}}).firstIssue(),
            "attr axis: axis 2 is out of range for x f32[3, 4]");
  EXPECT_EQ(inferOne("layernorm", {f32({2, 7, 129}), f32({7, 129}), f32({7, 129})},
                     {{"axis", -2}}),
            f32({2, 7, 129}));
  EXPECT_EQ(infer("layernorm", {f32({2, 7, 129}), f32({129})}, {{"axis", 1}})
                .firstIssue(),
            "operand 1: weight f32[129] must have shape [7, 129] (the normalised "
            "dimensions of x)");
  EXPECT_EQ(inferOne("rmsnorm", {f32({5, 3072}), f32({3072})}), f32({5, 3072}));
}

TEST(OpInference, Reductions) {
  EXPECT_EQ(inferOne("reduce_sum", {f32({7, 3, 100})},
                     {{"axes", Attribute::ints({0, -1})}}),
            f32({3}));
  EXPECT_EQ(inferOne("reduce_mean", {f32({7, 3, 100})},
                     {{"axes", Attribute::ints({1})}, {"keepdims", true}}),
            f32({7, 1, 100}));
  EXPECT_EQ(inferOne("reduce_max", {f32({1000})}, {{"axes", Attribute::ints({0})}}),
            f32({}));
  EXPECT_EQ(infer("reduce_sum", {f32({3, 4})}, {{"axes", Attribute::ints({1, -1})}})
                .firstIssue(),
            "attr axes: axis -1 is listed twice in [1, -1]");
  EXPECT_EQ(infer("reduce_sum", {f32({3, 4})}, {{"axes", Attribute::ints({})}})
                .firstIssue(),
            "attr axes: axes must list at least one axis");
  EXPECT_EQ(infer("reduce_sum", {f32({3, 4})}, {{"axes", Attribute::ints({2})}})
                .firstIssue(),
            "attr axes: axis 2 is out of range for rank 2");
}

TEST(OpInference, DataMovement) {
  EXPECT_EQ(inferOne("transpose", {f32({7, 1, 77})}, {{"perm", Attribute::ints({2, 0, 1})}}),
            f32({77, 7, 1}));
  EXPECT_EQ(infer("transpose", {f32({3, 4})}, {{"perm", Attribute::ints({0, 0})}})
                .firstIssue(),
            "attr perm: perm [0, 0] is not a permutation of the 2 axes of x f32[3, 4]");
  EXPECT_EQ(inferOne("reshape", {f32({1000})}, {{"shape", Attribute::ints({8, -1})}}),
            f32({8, 125}));
  EXPECT_EQ(inferOne("reshape", {f32({3072})}, {{"shape", Attribute::ints({-1, 64})}}),
            f32({48, 64}));
  EXPECT_EQ(infer("reshape", {f32({100})}, {{"shape", Attribute::ints({-1, -1})}})
                .firstIssue(),
            "attr shape: shape [-1, -1] has more than one -1");
  EXPECT_EQ(infer("reshape", {f32({77})}, {{"shape", Attribute::ints({2, -1})}})
                .firstIssue(),
            "attr shape: cannot reshape x f32[77] (77 elements) to [2, -1]");
  EXPECT_EQ(infer("reshape", {f32({77})}, {{"shape", Attribute::ints({7, 12})}})
                .firstIssue(),
            "attr shape: cannot reshape x f32[77] (77 elements) to [7, 12] (84 elements)");

  Result s = infer("split", {f32({7, 129})},
                   {{"axis", -1}, {"sizes", Attribute::ints({64, 64, 1})}});
  ASSERT_TRUE(s.ok()) << s.firstIssue();
  EXPECT_EQ(s.types, (std::vector<TensorType>{f32({7, 64}), f32({7, 64}), f32({7, 1})}));
  EXPECT_EQ(infer("split", {f32({7, 129})}, {{"axis", 1}, {"sizes", Attribute::ints({64, 64})}})
                .firstIssue(),
            "attr sizes: sizes [64, 64] sum to 128, but dimension 1 of x f32[7, 129] is 129");

  EXPECT_EQ(inferOne("concat", {f32({7, 64}), f32({7, 1}), f32({7, 64})}, {{"axis", 1}}),
            f32({7, 129}));
  EXPECT_EQ(infer("concat", {f32({7, 64}), f32({6, 64})}, {{"axis", 1}}).firstIssue(),
            "operand 1: input 1 f32[6, 64] does not match input 0 f32[7, 64] outside axis 1");

  EXPECT_EQ(inferOne("squeeze", {f32({7, 1, 77, 1})}, {{"axes", Attribute::ints({1, -1})}}),
            f32({7, 77}));
  EXPECT_EQ(infer("squeeze", {f32({7, 2})}, {{"axes", Attribute::ints({1})}}).firstIssue(),
            "attr axes: dimension 1 of x f32[7, 2] is 2, not 1");
  EXPECT_EQ(inferOne("unsqueeze", {f32({7, 77})}, {{"axes", Attribute::ints({0, -1})}}),
            f32({1, 7, 77, 1}));
  EXPECT_EQ(inferOne("unsqueeze", {f32({})}, {{"axes", Attribute::ints({0})}}), f32({1}));
}

TEST(OpInference, CausalMask) {
  EXPECT_EQ(inferOne("causal_mask_add", {f32({4, 16, 16})}), f32({4, 16, 16}));
  EXPECT_EQ(inferOne("causal_mask_add", {f32({1, 77})}), f32({1, 77}));
  EXPECT_EQ(infer("causal_mask_add", {f32({16})}).firstIssue(),
            "operand 0: x f32[16] must have rank 2 or more ([..., queries, keys])");
}

// The issue's sizes, none of them (or only some) multiples of 64.
TEST(OpInference, AnySizeWorks) {
  for (int64_t n : {1, 7, 77, 100, 129, 1000, 3072}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(inferOne("matmul", {f32({n, 64}), f32({64, n})}), f32({n, n}));
    EXPECT_EQ(inferOne("linear", {f32({3, n}), f32({n, n}), f32({n})}), f32({3, n}));
    EXPECT_EQ(inferOne("softmax", {f32({n, 3})}, {{"axis", 0}}), f32({n, 3}));
    EXPECT_EQ(inferOne("layernorm", {f32({2, n}), f32({n}), f32({n})}), f32({2, n}));
    EXPECT_EQ(inferOne("reduce_sum", {f32({n, 5})}, {{"axes", Attribute::ints({0})}}),
              f32({5}));
    EXPECT_EQ(inferOne("causal_mask_add", {f32({n, n})}), f32({n, n}));
  }
}

} // namespace
} // namespace spyre::compiler
