#include "testlib/RandomGraph.h"

#include "compiler/ir/Verifier.h"
#include "compiler/ref/Random.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace spyre::compiler::test {

namespace {

class Generator {
public:
  Generator(uint64_t seed, const RandomGraphOptions &options)
      : rng_(seed, 0x5eed), options_(options) {}

  std::unique_ptr<Graph> run() {
    graph_ = std::make_unique<Graph>(name("graph"));
    if (options_.annotations && chance(2))
      graph_->annotations() = annotations(2);
    // Each draw is its own statement: the order in which a call's
    // arguments are evaluated is the compiler's choice, and a seed must give
    // the same graph with every compiler (the type is drawn before the
    // name, as GCC's order had it when the seeds' notes were written).
    int inputs = 1 + pick(3);
    for (int i = 0; i < inputs; ++i) {
      const TensorType type = randomType();
      Value *v = graph_->addInput(freshValueName(), type);
      maybeAnnotate(v->annotations());
    }
    int constants = pick(4);
    for (int i = 0; i < constants; ++i) {
      ConstantDataPtr data = randomData();
      Value *v = graph_->addConstant(freshValueName(), std::move(data));
      maybeAnnotate(v->annotations());
    }
    for (int i = 0; i < options_.ops; ++i)
      addRandomOp();
    chooseOutputs();
    DiagnosticEngine diags;
    SPYRE_ASSERT(verifyGraph(*graph_, diags), "random graph invalid: " + diags.str());
    return std::move(graph_);
  }

private:
  int pick(int n) { return static_cast<int>(rng_.next() % static_cast<uint32_t>(n)); }
  bool chance(int oneIn) { return pick(oneIn) == 0; }

  std::string name(const std::string &base) {
    static const char *kOdd[] = {"a b", "x/y:z", "q\"uote", "back\\slash",
                                 "\xc3\xbc" "nicode", "%pct", "@at", "{brace}"};
    static const char *kControl[] = {"tab\there", "nl\nhere", "bell\x07"};
    int r = pick(10);
    if (r == 0) {
      std::string odd = kOdd[pick(8)];
      if (!options_.slashNames)
        std::replace(odd.begin(), odd.end(), '/', '|');
      return odd + std::to_string(counter_++);
    }
    if (r == 1 && options_.controlCharNames)
      return std::string(kControl[pick(3)]) + std::to_string(counter_++);
    if (r == 2)
      return base + "." + std::to_string(counter_++) + "-x$";
    return base + std::to_string(counter_++);
  }

  std::string freshValueName() {
    std::string n;
    do
      n = name("t");
    while (graph_->findValue(n));
    return n;
  }

  std::string freshOpName() {
    std::string n;
    do
      n = name("op");
    while (graph_->findOp(n));
    return n;
  }

  Shape randomShape(int maxRank = 4) {
    static const int64_t kDims[] = {1, 2, 3, 5, 7, 64, 77};
    Shape s(static_cast<size_t>(pick(maxRank + 1)));
    for (int64_t &d : s)
      d = kDims[pick(7)];
    return s;
  }

  TensorType randomType() {
    ElementType et = chance(4) ? ElementType::F16 : ElementType::F32;
    Shape s = randomShape();
    if (s.empty() && !chance(3))
      s = {7};
    return {et, s};
  }

  ConstantDataPtr randomData() {
    static const ElementType kTypes[] = {ElementType::F32, ElementType::F16,
                                         ElementType::I8, ElementType::I32};
    TensorType type{kTypes[pick(4)], {}};
    int64_t n = chance(2) ? 1 + pick(16) : 17 + pick(40);
    if (chance(3))
      type.shape = {n};
    else if (n % 2 == 0)
      type.shape = {2, n / 2};
    else
      type.shape = {n};
    if (chance(8))
      type.shape = {};
    std::string bytes(static_cast<size_t>(type.byteSize()), '\0');
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<char>(rng_.next() & 0xff);
    if (!options_.specialValues && isFloatType(type.elementType)) {
      // Finite values only: rewrite each element as a small float.
      std::vector<double> values;
      for (int64_t i = 0; i < type.elementCount(); ++i)
        values.push_back((pick(2001) - 1000) / 64.0);
      return ConstantData::fromDoubles(type, values);
    }
    return ConstantData::create(type, std::move(bytes));
  }

  Attribute randomScalarAttr(int depth) {
    switch (pick(depth > 0 ? 7 : 5)) {
    case 0:
      return static_cast<int64_t>(rng_.next()) - (int64_t(1) << 31);
    case 1: {
      static const double kFloats[] = {
          0.0, -0.0, 0.1, 1e-300, 1e300, 5e-324, 1.0 / 3.0,
          std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN(), -2.5, 123456789.0};
      return kFloats[pick(12)];
    }
    case 2:
      return chance(2);
    case 3:
      return name("s");
    case 4:
      return std::string("esc\"\\\n\t\x01") + std::to_string(pick(100));
    case 5: {
      Attribute::List l;
      int n = pick(4);
      for (int i = 0; i < n; ++i)
        l.push_back(randomScalarAttr(depth - 1));
      return Attribute::list(std::move(l));
    }
    default:
      return annotations(depth - 1);
    }
  }

  AttrDict annotations(int depth) {
    AttrDict d;
    static const char *kKeys[] = {"layout", "split", "cores", "x.y", "weird key",
                                  "_k"};
    int n = 1 + pick(3);
    for (int i = 0; i < n; ++i) {
      Attribute value = randomScalarAttr(depth);
      d.set(kKeys[pick(6)], std::move(value));
    }
    return d;
  }

  void maybeAnnotate(AttrDict &d) {
    if (options_.annotations && chance(3))
      d = annotations(2);
  }

  /// Values usable as operands of `def`, of one element type.
  std::vector<Value *> candidates(const OpDef &def, ElementType type) {
    std::vector<Value *> out;
    auto consider = [&](Value *v) {
      if (v->type().elementType == type && (def.types & elementTypeBit(type)))
        out.push_back(v);
    };
    for (Value *v : graph_->inputs())
      consider(v);
    for (Value *v : graph_->constants())
      consider(v);
    for (Op *op : graph_->ops())
      for (Value *v : op->results())
        consider(v);
    return out;
  }

  Attribute randomAttr(const AttrSpec &spec, const std::vector<Value *> &operands,
                       const AttrDict &soFar) {
    int64_t rank = operands.empty() ? 0 : operands[0]->type().rank();
    const Shape &shape = operands[0]->type().shape;
    switch (spec.type) {
    case AttrType::Int:
      return static_cast<int64_t>(pick(static_cast<int>(2 * rank + 1))) - rank;
    case AttrType::Float:
      return spec.name == "epsilon" ? 1e-5 * (1 + pick(10)) : 0.5 * pick(7);
    case AttrType::Bool:
      return chance(2);
    case AttrType::String: {
      if (!spec.allowed.empty())
        return std::string(spec.allowed[static_cast<size_t>(
            pick(static_cast<int>(spec.allowed.size())))]);
      // Free strings: a host op's ONNX type (unary ops, which take any
      // shape) and its attributes (none).
      static const char *kHostOps[] = {"Sin", "Floor", "Sign", "Softsign"};
      if (spec.name == "op")
        return std::string(kHostOps[pick(4)]);
      return std::string("{}");
    }
    case AttrType::FloatList:
      return Attribute::floats({0.5, 1.5});
    case AttrType::IntList:
      break;
    }
    std::vector<int64_t> v;
    if (spec.name == "perm") {
      for (int64_t i = 0; i < rank; ++i)
        v.push_back(i);
      for (size_t i = v.size(); i > 1; --i)
        std::swap(v[i - 1], v[static_cast<size_t>(pick(static_cast<int>(i)))]);
    } else if (spec.name == "shape") {
      v = std::vector<int64_t>(shape.rbegin(), shape.rend());
      if (!v.empty() && chance(2))
        v[static_cast<size_t>(pick(static_cast<int>(v.size())))] = -1;
      if (chance(3))
        v = {-1};
    } else if (spec.name == "sizes") {
      std::optional<int64_t> axis =
          soFar.contains("axis") ? normalizeAxis(soFar.get("axis").asInt(), rank)
                                 : std::nullopt;
      int64_t dim = axis ? shape[static_cast<size_t>(*axis)] : 1;
      while (dim > 0) {
        int64_t piece = 1 + pick(static_cast<int>(dim));
        v.push_back(piece);
        dim -= piece;
      }
    } else if (spec.name == "axes") {
      int64_t outRank = rank + (chance(2) ? 1 : 0);
      for (int64_t a = -outRank; a < outRank; ++a)
        if (chance(3) && std::find(v.begin(), v.end(), a + outRank) == v.end() &&
            std::find(v.begin(), v.end(), a - outRank) == v.end())
          v.push_back(a);
      if (v.empty() && outRank > 0)
        v.push_back(pick(static_cast<int>(outRank)));
    }
    return Attribute::ints(v);
  }

  void addRandomOp() {
    for (int attempt = 0; attempt < 200; ++attempt) {
      const OpDef &def = opTable()[static_cast<size_t>(pick(kNumOpKinds))];
      ElementType type = chance(4) ? ElementType::F16 : ElementType::F32;
      std::vector<Value *> pool = candidates(def, type);
      if (pool.empty())
        continue;
      size_t count = def.minOperands();
      size_t extra = std::min<size_t>(def.maxOperands(), def.minOperands() + 2) -
                     def.minOperands();
      count += static_cast<size_t>(pick(static_cast<int>(extra) + 1));
      std::vector<Value *> operands;
      for (size_t i = 0; i < count; ++i)
        operands.push_back(pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))]);
      // Later operands often need the first one's shape (weights, concat).
      if (count > 1 && chance(2))
        for (size_t i = 1; i < count; ++i)
          if (operands[i]->type().shape != operands[0]->type().shape)
            for (Value *p : pool)
              if (p->type().shape == operands[0]->type().shape)
                operands[i] = p;
      AttrDict attrs;
      for (const AttrSpec &spec : def.attrs)
        if (spec.required() || chance(2))
          attrs.set(std::string(spec.name), randomAttr(spec, operands, attrs));
      std::vector<OpIssue> issues;
      if (!completeAttrs(def, attrs, issues))
        continue;
      std::vector<TensorType> types;
      for (const Value *v : operands)
        types.push_back(v->type());
      std::optional<std::vector<TensorType>> results =
          checkOp(def, types, attrs, issues);
      if (!results)
        continue;
      std::vector<ResultSpec> specs;
      for (const TensorType &t : *results)
        specs.push_back({freshValueName(), t});
      Op *op = graph_->createOp(def.kind, freshOpName(), operands, attrs, specs);
      maybeAnnotate(op->annotations());
      for (Value *r : op->results())
        maybeAnnotate(r->annotations());
      return;
    }
  }

  void chooseOutputs() {
    std::vector<Value *> all = graph_->inputs();
    for (Op *op : graph_->ops())
      for (Value *v : op->results())
        all.push_back(v);
    std::vector<Value *> outputs{all.back()};
    for (Value *v : all)
      if (v != outputs.front() && chance(5))
        outputs.push_back(v);
    graph_->setOutputs(outputs);
  }

  ref::Pcg32 rng_;
  RandomGraphOptions options_;
  std::unique_ptr<Graph> graph_;
  int counter_ = 0;
};

} // namespace

std::unique_ptr<Graph> randomGraph(uint64_t seed, const RandomGraphOptions &options) {
  return Generator(seed, options).run();
}

} // namespace spyre::compiler::test
