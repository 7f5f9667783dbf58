// The layout pass (what it assigns and inserts: Layout.h).
#include "compiler/passes/Layout.h"

#include "compiler/ir/Verifier.h"
#include "compiler/plan/KernelChoice.h"
#include "compiler/pm/Rewrite.h"

#include <algorithm>

namespace spyre::compiler {

namespace {

int64_t lastDim(const TensorType &type) {
  return type.rank() == 0 ? -1 : type.rank() - 1;
}

std::string checkOpKindList(const Attribute &value) {
  for (const Attribute &e : value.asList())
    if (!findOpDef(e.asString()))
      return "'" + e.asString() + "' is not an op kind";
  return "";
}

class LayoutAssigner {
public:
  LayoutAssigner(Graph &graph, PassContext &context)
      : graph_(graph), context_(context) {
    // The option parser has checked both (an enum and a list of op kinds).
    std::optional<isa::DType> dtype =
        parseDeviceDType(context.options().getString("default-dtype"));
    SPYRE_ASSERT(dtype.has_value(), "default-dtype was not checked");
    defaultDtype_ = *dtype;
    for (const std::string &name : context.options().getList("f32-ops")) {
      const OpDef *def = findOpDef(name);
      SPYRE_ASSERT(def != nullptr, "f32-ops was not checked: " + name);
      f32Ops_.push_back(def->kind);
    }
  }

  void run() {
    for (Value *v : graph_.inputs())
      annotate(*v, defaultLayout(*v, false));
    for (Value *c : graph_.constants())
      annotate(*c, constantLayout(*c));
    for (Op *op : graph_.ops()) {
      for (size_t i = 0; i < op->numOperands(); ++i) {
        Value *operand = op->operand(i);
        DeviceLayout current = layoutOf(*operand);
        DeviceLayout needed = requiredOperandLayout(*op, i, current);
        if (needed != current)
          op->setOperand(i, relayoutFor(operand, needed, *op));
      }
      bool f32 = std::find(f32Ops_.begin(), f32Ops_.end(), op->kind()) !=
                 f32Ops_.end();
      for (Value *r : op->results())
        if (!keepsLayout(*op, *r))
          annotate(*r, defaultLayout(*r, f32));
    }
    int64_t padded = 0, values = 0;
    auto count = [&](const Value &v) {
      padded += layoutOf(v).deviceElements() - v.type().elementCount();
      ++values;
    };
    for (const Value *v : graph_.inputs())
      count(*v);
    for (const Value *v : graph_.constants())
      count(*v);
    for (const Op *op : graph_.ops())
      for (const Value *v : op->results())
        count(*v);
    context_.addStatistic("values-laid-out", values);
    context_.addStatistic("padded-elements", padded);
  }

private:
  isa::DType dtypeOf(ElementType type, bool f32) const {
    if (type == ElementType::I8)
      return isa::DType::Int8;
    if (type == ElementType::I32)
      return isa::DType::Int32;
    return f32 ? isa::DType::Fp32 : defaultDtype_;
  }

  DeviceLayout defaultLayout(const Value &v, bool f32) const {
    return stickedOn(v.type().shape, dtypeOf(v.type().elementType, f32),
                     lastDim(v.type()));
  }

  /// What the first consumer needs; the default for an unused constant.
  DeviceLayout constantLayout(const Value &c) const {
    DeviceLayout base = defaultLayout(c, false);
    std::vector<OpUse> uses = graph_.usesOf(&c);
    if (uses.empty())
      return base;
    return requiredOperandLayout(*uses.front().op, uses.front().operandIndex,
                                 base);
  }

  /// A relayout keeps the layout it already carries (a second run of the
  /// pass leaves its own relayouts alone).
  bool keepsLayout(const Op &op, const Value &result) const {
    if (op.kind() != OpKind::Relayout)
      return false;
    std::string error;
    std::optional<DeviceLayout> l = valueLayout(result, error);
    return l && checkStickRule(*l, result.type()).empty();
  }

  void annotate(Value &v, const DeviceLayout &layout) {
    v.annotations().set(kLayoutAnnotation, layout.toAttribute());
  }

  DeviceLayout layoutOf(const Value &v) const {
    std::string error;
    std::optional<DeviceLayout> l = valueLayout(v, error);
    SPYRE_ASSERT(l.has_value(),
                 "value '" + v.name() + "' has no layout yet: " + error);
    return *l;
  }

  /// The relayout of `value` to `layout`, made before `consumer` the first
  /// time it is needed and shared afterwards.
  Value *relayoutFor(Value *value, const DeviceLayout &layout,
                     const Op &consumer) {
    for (const Made &m : made_)
      if (m.source == value && m.layout == layout)
        return m.result;
    OpBuilder b(graph_, &consumer, consumer.loc());
    Value *r = b.create(
        OpKind::Relayout, graph_.uniqueOpName(value->name() + ".relayout"),
        {value}, {}, graph_.uniqueValueName(value->name() + ".relayout"));
    annotate(*r, layout);
    made_.push_back({value, layout, r});
    context_.addStatistic("relayouts-inserted");
    return r;
  }

  struct Made {
    const Value *source;
    DeviceLayout layout;
    Value *result;
  };

  Graph &graph_;
  PassContext &context_;
  isa::DType defaultDtype_ = isa::DType::Dl16;
  std::vector<OpKind> f32Ops_;
  std::vector<Made> made_; // in creation order; searched, never hashed
};

bool checkLayouts(const Graph &graph, const PassContext &,
                  DiagnosticEngine &diags) {
  bool ok = true;
  auto read = [&](const Value &v,
                  const SourceLoc &loc) -> std::optional<DeviceLayout> {
    std::string error;
    std::optional<DeviceLayout> l = valueLayout(v, error);
    if (l)
      error = checkStickRule(*l, v.type());
    if (!error.empty()) {
      diags.error(loc, "value " + printName('%', v.name()) + ": " + error);
      ok = false;
      return std::nullopt;
    }
    return l;
  };
  const SourceLoc graphLocation = graphLoc(graph);
  for (const Value *v : graph.inputs())
    read(*v, graphLocation);
  for (const Value *v : graph.constants())
    read(*v, graphLocation);
  for (const Op *op : graph.ops())
    for (const Value *r : op->results())
      read(*r, opLocation(graph, *op));
  if (!ok)
    return false;
  for (const Op *op : graph.ops())
    for (size_t i = 0; i < op->numOperands(); ++i) {
      const Value &v = *op->operand(i);
      DeviceLayout has = *read(v, graphLocation);
      DeviceLayout needed = requiredOperandLayout(*op, i, has);
      if (has == needed)
        continue;
      diags.error(opLocation(graph, *op),
                  opPrefix(*op) + "operand " + std::to_string(i) + " " +
                      printName('%', v.name()) + " has layout " + has.str() +
                      ", but " + std::string(op->kindName()) + " needs " +
                      needed.str());
      ok = false;
    }
  return ok;
}

} // namespace

DeviceLayout requiredOperandLayout(const Op &op, size_t index,
                                   const DeviceLayout &current) {
  const TensorType &type = op.operand(index)->type();
  switch (op.kind()) {
  case OpKind::Relayout:
    return current;
  case OpKind::Matmul:
  case OpKind::GatedMatmul: {
    // a is [..., M, K] and b is [..., K, N]: a sticks on K, b on N; with the
    // transpose attribute those are the second-to-last dimensions
    // (gated_matmul's up weight is a second b).
    bool transposed = op.boolAttr(index == 0 ? "transpose_a" : "transpose_b");
    if (index == 1 && turnsBInKernel(op))
      transposed = false; // read as stored, turned in LX
    return stickedOn(type.shape, isa::DType::Dl16,
                     transposed ? type.rank() - 2 : type.rank() - 1);
  }
  default:
    return stickedOn(type.shape, current.dtype, lastDim(type));
  }
}

const PassInfo &layoutPass() {
  static const PassInfo info{
      "layout",
      "Assigns every value a device layout (dtype, stick dimension, device "
      "shape, "
      "dim_map) and inserts relayouts where a consumer needs another",
      "every value has a `layout` annotation that follows the stick rule for "
      "its "
      "type; every operand's layout equals what its consumer needs (matmul: a "
      "sticked on K, b on N, both dl16; others: sticked on the last "
      "dimension).",
      {
          {"default-dtype",
           OptionType::Enum,
           "dl16",
           "device dtype of float values",
           {"dl16", "f32"},
           nullptr},
          {"f32-ops",
           OptionType::List,
           "",
           "op kinds whose results stay f32 on the device (comma-separated)",
           {},
           checkOpKindList},
      },
      {
          {"values-laid-out", "values given a layout"},
          {"relayouts-inserted", "relayout ops inserted"},
          {"padded-elements",
           "device elements that are padding, summed over all values"},
      },
      [](Graph &graph, PassContext &context) {
        LayoutAssigner(graph, context).run();
        return PassResult::Success;
      },
      checkLayouts,
  };
  return info;
}

} // namespace spyre::compiler
