// The fuse-gated-matmul pass (what it rewrites: FuseGatedMatmul.h).
#include "compiler/passes/FuseGatedMatmul.h"

#include "compiler/pm/Rewrite.h"

namespace spyre::compiler {

namespace {

/// The operands of a fusable gated product.
struct GatedMatch {
  Value *x = nullptr, *gate = nullptr, *up = nullptr;
  bool transA = false, transB = false;
};

/// Whether `v` is the result of an op that only `user` reads (once) and
/// that is not a graph output.
bool onlyFeeds(const Graph &graph, const Value *v, const Op *user) {
  const std::vector<OpUse> uses = graph.usesOf(v);
  return v->isOpResult() && !graph.isOutput(v) && uses.size() == 1 &&
         uses.front().op == user;
}

Op *definedBy(const Value *v, OpKind kind) {
  Op *op = v->definingOp();
  return op && op->kind() == kind ? op : nullptr;
}

/// The gated product `mul` computes, if the pass may fuse it.
std::optional<GatedMatch> matchGated(const Graph &graph, const Op &mul) {
  if (mul.kind() != OpKind::Mul)
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i) {
    Op *silu = definedBy(mul.operand(i), OpKind::Silu);
    Op *g = silu ? definedBy(silu->operand(0), OpKind::Matmul) : nullptr;
    Op *u = definedBy(mul.operand(1 - i), OpKind::Matmul);
    if (!g || !u || g == u || !onlyFeeds(graph, silu->result(), &mul) ||
        !onlyFeeds(graph, g->result(), silu) ||
        !onlyFeeds(graph, u->result(), &mul))
      continue;
    const bool ta = g->boolAttr("transpose_a"), tb = g->boolAttr("transpose_b");
    const TensorType &wg = g->operand(1)->type(), &wu = u->operand(1)->type();
    if (g->operand(0) != u->operand(0) || u->boolAttr("transpose_a") != ta ||
        u->boolAttr("transpose_b") != tb || wg != wu || wg.rank() != 2 ||
        g->result()->type() != mul.result()->type() ||
        u->result()->type() != mul.result()->type())
      continue;
    return GatedMatch{g->operand(0), g->operand(1), u->operand(1), ta, tb};
  }
  return std::nullopt;
}

bool fuseRun(Graph &graph, PassContext &ctx) {
  for (Op *op : graph.ops()) {
    const std::optional<GatedMatch> match = matchGated(graph, *op);
    if (!match)
      continue;
    replaceOpInPlace(graph, op, [&](OpBuilder &b, const ReplacedNames &n) {
      return b.create(OpKind::GatedMatmul, n.opName,
                      {match->x, match->gate, match->up},
                      {{"transpose_a", match->transA},
                       {"transpose_b", match->transB}},
                      n.resultName);
    });
    ctx.addStatistic("gated-matmuls-fused");
  }
  // The products and the silu now feed nothing.
  eraseDeadOps(graph);
  return true;
}

} // namespace

const PassInfo &fuseGatedMatmulPass() {
  static const PassInfo info{
      "fuse-gated-matmul",
      "Fuses the SwiGLU gated product mul(silu(matmul(x, Wg)), matmul(x, "
      "Wu)) into gated_matmul",
      "no mul of silu(matmul(x, Wg)) and matmul(x, Wu) whose intermediates "
      "feed nothing else is left; every rewrite computes the same values and "
      "graph outputs keep their names.",
      {},
      {
          {"gated-matmuls-fused",
           "gated products rewritten as gated_matmul"},
      },
      [](Graph &graph, PassContext &ctx) {
        return fuseRun(graph, ctx) ? PassResult::Success : PassResult::Failure;
      },
      [](const Graph &graph, const PassContext &, DiagnosticEngine &diags) {
        bool ok = true;
        for (const Op *op : graph.ops())
          if (matchGated(graph, *op)) {
            diags.error(op->loc(),
                        "op '" + op->name() +
                            "' is a gated product left unfused");
            ok = false;
          }
        return ok;
      },
  };
  return info;
}

} // namespace spyre::compiler
