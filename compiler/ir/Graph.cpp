#include "compiler/ir/Graph.h"

#include "numerics/Half.h"
#include "support/Hash.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace spyre::compiler {

// ---- ConstantData ----

ConstantData::ConstantData(TensorType type, std::string bytes)
    : type_(std::move(type)), bytes_(std::move(bytes)) {
  SPYRE_ASSERT(checkShape(type_.shape).empty(), "invalid constant shape");
  SPYRE_ASSERT(static_cast<int64_t>(bytes_.size()) == type_.byteSize(),
               "constant data size does not match " + type_.str());
  Fnv1a64 h;
  h.update(type_.str());
  h.update(bytes_);
  digest_ = h.digest();
}

ConstantData::ConstantData(TensorType type, std::string source,
                           std::function<std::string()> load)
    : type_(std::move(type)), load_(std::move(load)), loaded_(false) {
  SPYRE_ASSERT(checkShape(type_.shape).empty(), "invalid constant shape");
  Fnv1a64 h;
  h.update(type_.str());
  h.update("deferred:");
  h.update(source);
  digest_ = h.digest();
}

std::shared_ptr<const ConstantData>
ConstantData::deferred(TensorType type, std::string source,
                       std::function<std::string()> load) {
  return std::make_shared<const ConstantData>(std::move(type), std::move(source),
                                              std::move(load));
}

const std::string &ConstantData::bytes() const {
  if (!loaded_.load(std::memory_order_acquire))
    std::call_once(loadOnce_, [this] {
      std::string bytes = load_();
      SPYRE_ASSERT(static_cast<int64_t>(bytes.size()) == type_.byteSize(),
                   "deferred constant data size does not match " +
                       type_.str());
      bytes_ = std::move(bytes);
      loaded_.store(true, std::memory_order_release);
    });
  return bytes_;
}

bool ConstantData::loaded() const {
  return loaded_.load(std::memory_order_acquire);
}

std::shared_ptr<const ConstantData> ConstantData::create(TensorType type,
                                                         std::string bytes) {
  return std::make_shared<const ConstantData>(std::move(type), std::move(bytes));
}

std::shared_ptr<const ConstantData> ConstantData::fromNpy(const NpyArray &array) {
  return create({fromNpyDtype(array.dtype), array.shape}, array.data);
}

std::shared_ptr<const ConstantData>
ConstantData::fromDoubles(const TensorType &type,
                          const std::vector<double> &values) {
  SPYRE_ASSERT(static_cast<int64_t>(values.size()) == type.elementCount(),
               "value count does not match " + type.str());
  std::string bytes(static_cast<size_t>(type.byteSize()), '\0');
  char *p = bytes.data();
  for (double v : values) {
    switch (type.elementType) {
    case ElementType::F32: {
      auto f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      p += 4;
      break;
    }
    case ElementType::F16: {
      uint16_t h = half::floatToHalf(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      p += 2;
      break;
    }
    case ElementType::I8: {
      SPYRE_ASSERT(v == std::trunc(v) && v >= -128 && v <= 127,
                   "value out of i8 range");
      *p++ = static_cast<char>(static_cast<int8_t>(v));
      break;
    }
    case ElementType::I32: {
      SPYRE_ASSERT(v == std::trunc(v) && v >= -2147483648.0 && v <= 2147483647.0,
                   "value out of i32 range");
      auto i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      p += 4;
      break;
    }
    }
  }
  return create(type, std::move(bytes));
}

double ConstantData::element(int64_t index) const {
  SPYRE_ASSERT(index >= 0 && index < type_.elementCount(),
               "constant element index out of range");
  const char *p = bytes().data() + index * elementTypeBytes(type_.elementType);
  switch (type_.elementType) {
  case ElementType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case ElementType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half::halfToFloat(h);
  }
  case ElementType::I8:
    return static_cast<int8_t>(*p);
  case ElementType::I32: {
    int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  }
  SPYRE_UNREACHABLE("bad element type");
}

std::vector<double> ConstantData::toDoubles() const {
  std::vector<double> out(static_cast<size_t>(type_.elementCount()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = element(static_cast<int64_t>(i));
  return out;
}

NpyArray ConstantData::toNpy() const {
  NpyArray a;
  a.dtype = toNpyDtype(type_.elementType);
  a.shape = type_.shape;
  a.data = bytes();
  return a;
}

// ---- Value ----

Value::Value(Private, std::string name, TensorType type, ValueKind kind)
    : name_(std::move(name)), type_(std::move(type)), kind_(kind) {}

const ConstantData &Value::constantData() const {
  SPYRE_ASSERT(isConstant() && data_, "value '" + name_ + "' is not a constant");
  return *data_;
}

// ---- Op ----

Op::Op(Private, OpKind kind, std::string name)
    : kind_(kind), name_(std::move(name)) {}

Value *Op::operand(size_t index) const {
  SPYRE_ASSERT(index < operands_.size(), "operand index out of range in op '" +
                                             name_ + "'");
  return operands_[index];
}

void Op::setOperand(size_t index, Value *value) {
  SPYRE_ASSERT(index < operands_.size(), "operand index out of range in op '" +
                                             name_ + "'");
  SPYRE_ASSERT(value != nullptr, "null operand");
  unlinkOperand(index);
  operands_[index] = value;
  linkOperand(index);
}

void Op::setOperands(std::vector<Value *> operands) {
  for (Value *v : operands)
    SPYRE_ASSERT(v != nullptr, "null operand");
  for (size_t i = 0; i < operands_.size(); ++i)
    unlinkOperand(i);
  operands_ = std::move(operands);
  for (size_t i = 0; i < operands_.size(); ++i)
    linkOperand(i);
}

void Op::linkOperand(size_t index) {
  Value *v = operands_[index];
  if (v && graph_ && v->graph_ == graph_)
    v->uses_.push_back({this, index});
}

void Op::unlinkOperand(size_t index) {
  Value *v = operands_[index];
  if (!v || !graph_ || v->graph_ != graph_)
    return;
  auto it = std::find_if(v->uses_.begin(), v->uses_.end(), [&](const OpUse &u) {
    return u.op == this && u.operandIndex == index;
  });
  SPYRE_ASSERT(it != v->uses_.end(), "use of '" + v->name() + "' by op '" +
                                         name_ + "' was not recorded");
  *it = v->uses_.back();
  v->uses_.pop_back();
}

Value *Op::result(size_t index) const {
  SPYRE_ASSERT(index < results_.size(), "result index out of range in op '" +
                                            name_ + "'");
  return results_[index].get();
}

std::vector<Value *> Op::results() const {
  std::vector<Value *> out;
  for (const auto &r : results_)
    out.push_back(r.get());
  return out;
}

int64_t Op::intAttr(std::string_view name) const {
  return attrs_.get(name).asInt();
}

double Op::floatAttr(std::string_view name) const {
  return attrs_.get(name).asFloat();
}

bool Op::boolAttr(std::string_view name) const {
  return attrs_.get(name).asBool();
}

const std::string &Op::stringAttr(std::string_view name) const {
  return attrs_.get(name).asString();
}

std::vector<int64_t> Op::intsAttr(std::string_view name) const {
  return attrs_.get(name).asInts();
}

// ---- Graph ----

Graph::Graph(std::string name) : name_(std::move(name)) {}

Graph::~Graph() = default;

Graph::Graph(Graph &&other) noexcept
    : name_(std::move(other.name_)), sourceFile_(std::move(other.sourceFile_)),
      annotations_(std::move(other.annotations_)),
      inputs_(std::move(other.inputs_)), constants_(std::move(other.constants_)),
      ops_(std::move(other.ops_)), outputs_(std::move(other.outputs_)),
      outputSet_(std::move(other.outputSet_)), values_(std::move(other.values_)),
      opsByName_(std::move(other.opsByName_)),
      validIndexEnd_(other.validIndexEnd_) {
  other.validIndexEnd_ = 0;
  adoptMembers();
}

Graph &Graph::operator=(Graph &&other) noexcept {
  if (this == &other)
    return *this;
  name_ = std::move(other.name_);
  sourceFile_ = std::move(other.sourceFile_);
  annotations_ = std::move(other.annotations_);
  inputs_ = std::move(other.inputs_);
  constants_ = std::move(other.constants_);
  ops_ = std::move(other.ops_);
  outputs_ = std::move(other.outputs_);
  outputSet_ = std::move(other.outputSet_);
  values_ = std::move(other.values_);
  opsByName_ = std::move(other.opsByName_);
  validIndexEnd_ = other.validIndexEnd_;
  other.validIndexEnd_ = 0;
  adoptMembers();
  return *this;
}

void Graph::adoptMembers() {
  for (const auto &v : values_)
    v.second->graph_ = this;
  for (const auto &op : ops_)
    op->graph_ = this;
}

void Graph::registerValue(Value *value) {
  SPYRE_ASSERT(!value->name().empty(), "empty value name");
  value->graph_ = this;
  bool inserted = values_.emplace(value->name(), value).second;
  SPYRE_ASSERT(inserted, "value name '" + value->name() + "' is already used");
}

Value *Graph::addInput(std::string name, TensorType type) {
  auto v = std::make_unique<Value>(Value::Private{}, std::move(name),
                                   std::move(type), ValueKind::Input);
  registerValue(v.get());
  inputs_.push_back(std::move(v));
  return inputs_.back().get();
}

Value *Graph::addConstant(std::string name, ConstantDataPtr data) {
  SPYRE_ASSERT(data != nullptr, "constant without data");
  auto v = std::make_unique<Value>(Value::Private{}, std::move(name),
                                   data->type(), ValueKind::Constant);
  v->data_ = std::move(data);
  registerValue(v.get());
  constants_.push_back(std::move(v));
  return constants_.back().get();
}

Op *Graph::createOp(OpKind kind, std::string name, std::vector<Value *> operands,
                    AttrDict attrs, std::vector<ResultSpec> results,
                    const Op *before) {
  SPYRE_ASSERT(!name.empty(), "empty op name");
  SPYRE_ASSERT(!opsByName_.contains(name),
               "op name '" + name + "' is already used");
  auto op = std::make_unique<Op>(Op::Private{}, kind, std::move(name));
  op->graph_ = this;
  op->setOperands(std::move(operands));
  op->attrs_ = std::move(attrs);
  for (size_t i = 0; i < results.size(); ++i) {
    auto v = std::make_unique<Value>(Value::Private{}, std::move(results[i].name),
                                     std::move(results[i].type),
                                     ValueKind::OpResult);
    v->definingOp_ = op.get();
    v->resultIndex_ = i;
    registerValue(v.get());
    op->results_.push_back(std::move(v));
  }
  Op *raw = op.get();
  opsByName_.emplace(raw->name(), raw);
  size_t pos = before ? opIndex(before) : ops_.size();
  raw->index_ = pos;
  if (pos == ops_.size() && validIndexEnd_ == pos)
    ++validIndexEnd_;
  else
    invalidateIndexesFrom(pos);
  ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(pos), std::move(op));
  return raw;
}

void Graph::eraseOp(Op *op) {
  size_t index = opIndex(op);
  for (const auto &r : op->results_)
    SPYRE_ASSERT(r->uses_.empty() && !isOutput(r.get()),
                 "erasing op '" + op->name() + "' whose result '" + r->name() +
                     "' is still used");
  for (size_t i = 0; i < op->operands_.size(); ++i)
    op->unlinkOperand(i);
  for (const auto &r : op->results_)
    values_.erase(r->name());
  opsByName_.erase(op->name());
  ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(index));
  invalidateIndexesFrom(index);
}

void Graph::eraseConstant(Value *value) {
  auto it = std::find_if(constants_.begin(), constants_.end(),
                         [&](const auto &c) { return c.get() == value; });
  SPYRE_ASSERT(it != constants_.end(), "not a constant of this graph");
  SPYRE_ASSERT(value->uses_.empty() && !isOutput(value),
               "erasing constant '" + value->name() + "' that is still used");
  values_.erase(value->name());
  constants_.erase(it);
}

void Graph::moveOpBefore(Op *op, const Op *before) {
  if (op == before)
    return;
  size_t from = opIndex(op);
  std::unique_ptr<Op> owned = std::move(ops_[from]);
  ops_.erase(ops_.begin() + static_cast<std::ptrdiff_t>(from));
  invalidateIndexesFrom(from);
  size_t pos = before ? opIndex(before) : ops_.size();
  owned->index_ = pos;
  ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(pos), std::move(owned));
  invalidateIndexesFrom(pos);
}

void Graph::moveOpsBefore(const std::vector<Op *> &ops, const Op *before) {
  if (ops.empty())
    return;
  const size_t n = ops_.size();
  std::vector<char> moving(n, 0);
  size_t first = before ? opIndex(before) : n;
  for (const Op *op : ops) {
    size_t i = opIndex(op);
    SPYRE_ASSERT(op != before && !moving[i],
                 "moving op '" + op->name() + "' twice or before itself");
    moving[i] = 1;
    first = std::min(first, i);
  }
  std::vector<std::unique_ptr<Op>> order;
  order.reserve(n);
  auto placeMoved = [&] {
    for (Op *op : ops)
      order.push_back(std::move(ops_[op->index_]));
  };
  for (size_t i = 0; i < n; ++i) {
    if (moving[i])
      continue;
    if (ops_[i].get() == before)
      placeMoved();
    order.push_back(std::move(ops_[i]));
  }
  if (!before)
    placeMoved();
  ops_ = std::move(order);
  invalidateIndexesFrom(first);
}

void Graph::setOutputs(std::vector<Value *> outputs) {
  for (Value *v : outputs)
    SPYRE_ASSERT(v != nullptr, "null output");
  outputs_ = std::move(outputs);
  outputSet_ = std::set<const Value *>(outputs_.begin(), outputs_.end());
}

std::vector<Value *> Graph::inputs() const {
  std::vector<Value *> out;
  for (const auto &v : inputs_)
    out.push_back(v.get());
  return out;
}

std::vector<Value *> Graph::constants() const {
  std::vector<Value *> out;
  for (const auto &v : constants_)
    out.push_back(v.get());
  return out;
}

std::vector<Op *> Graph::ops() const {
  std::vector<Op *> out;
  for (const auto &op : ops_)
    out.push_back(op.get());
  return out;
}

Value *Graph::findValue(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : it->second;
}

Op *Graph::findOp(std::string_view name) const {
  auto it = opsByName_.find(name);
  return it == opsByName_.end() ? nullptr : it->second;
}

bool Graph::contains(const Value *value) const {
  return value && findValue(value->name()) == value;
}

bool Graph::contains(const Op *op) const {
  return op && findOp(op->name()) == op;
}

size_t Graph::opIndex(const Op *op) const {
  SPYRE_ASSERT(op && op->graph_ == this, "op is not in this graph");
  if (op->index_ >= validIndexEnd_) {
    for (size_t i = validIndexEnd_; i < ops_.size(); ++i)
      ops_[i]->index_ = i;
    validIndexEnd_ = ops_.size();
  }
  SPYRE_ASSERT(op->index_ < ops_.size() && ops_[op->index_].get() == op,
               "op '" + op->name() + "' is not in this graph");
  return op->index_;
}

Op *Graph::nextOp(const Op *op) const {
  size_t i = opIndex(op) + 1;
  return i < ops_.size() ? ops_[i].get() : nullptr;
}

std::vector<OpUse> Graph::usesOf(const Value *value) const {
  if (!value || value->graph_ != this)
    return {};
  std::vector<std::pair<size_t, OpUse>> keyed;
  keyed.reserve(value->uses_.size());
  for (const OpUse &use : value->uses_)
    keyed.push_back({opIndex(use.op), use});
  std::sort(keyed.begin(), keyed.end(), [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first < b.first
                              : a.second.operandIndex < b.second.operandIndex;
  });
  std::vector<OpUse> uses;
  uses.reserve(keyed.size());
  for (const auto &k : keyed)
    uses.push_back(k.second);
  return uses;
}

size_t Graph::numUses(const Value *value) const {
  return value && value->graph_ == this ? value->uses_.size() : 0;
}

bool Graph::isOutput(const Value *value) const {
  return outputSet_.contains(value);
}

void Graph::replaceAllUsesWith(Value *from, Value *to) {
  SPYRE_ASSERT(to != nullptr, "replacing with a null value");
  if (from == to)
    return;
  if (from && from->graph_ == this) {
    // setOperand edits from->uses_: walk a copy.
    std::vector<OpUse> uses = from->uses_;
    for (const OpUse &use : uses)
      use.op->setOperand(use.operandIndex, to);
  }
  bool changed = false;
  for (Value *&out : outputs_)
    if (out == from) {
      out = to;
      changed = true;
    }
  if (changed)
    outputSet_ = std::set<const Value *>(outputs_.begin(), outputs_.end());
}

namespace {

template <typename Map>
std::string uniqueName(const Map &map, std::string_view base) {
  std::string name(base.empty() ? "t" : base);
  if (!map.contains(name))
    return name;
  for (int i = 1;; ++i) {
    std::string candidate = name + "." + std::to_string(i);
    if (!map.contains(candidate))
      return candidate;
  }
}

} // namespace

std::string Graph::uniqueValueName(std::string_view base) const {
  return uniqueName(values_, base);
}

std::string Graph::uniqueOpName(std::string_view base) const {
  return uniqueName(opsByName_, base);
}

int64_t Graph::parameterBytes() const {
  int64_t n = 0;
  for (const auto &c : constants_)
    n += c->type().byteSize();
  return n;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>(name_);
  g->sourceFile_ = sourceFile_;
  g->annotations_ = annotations_;
  for (const auto &v : inputs_)
    g->addInput(v->name(), v->type())->annotations_ = v->annotations_;
  for (const auto &v : constants_) {
    Value *c = g->addConstant(v->name(), v->data_);
    c->annotations_ = v->annotations_;
    c->type_ = v->type_;
  }
  // Operands are mapped once every value exists, so a clone of a graph that
  // is out of order (which the verifier reports) is the same graph.
  auto map = [&](Value *v) {
    Value *mapped = v ? g->findValue(v->name()) : nullptr;
    return mapped ? mapped : v;
  };
  for (const auto &op : ops_) {
    std::vector<ResultSpec> results;
    for (const auto &r : op->results_)
      results.push_back({r->name(), r->type()});
    Op *copy = g->createOp(op->kind_, op->name_, {}, op->attrs_,
                           std::move(results));
    copy->annotations_ = op->annotations_;
    copy->loc_ = op->loc_;
    for (size_t i = 0; i < op->results_.size(); ++i)
      copy->results_[i]->annotations_ = op->results_[i]->annotations_;
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    std::vector<Value *> operands;
    for (Value *v : ops_[i]->operands_)
      operands.push_back(map(v));
    g->ops_[i]->operands_ = std::move(operands);
    for (size_t k = 0; k < g->ops_[i]->operands_.size(); ++k)
      g->ops_[i]->linkOperand(k);
  }
  std::vector<Value *> outputs;
  for (Value *v : outputs_)
    outputs.push_back(map(v));
  g->outputs_ = std::move(outputs);
  g->outputSet_ = std::set<const Value *>(g->outputs_.begin(), g->outputs_.end());
  return g;
}

// ---- Building with inference ----

Op *buildOp(Graph &graph, OpKind kind, std::string name,
            std::vector<Value *> operands, AttrDict attrs,
            std::vector<std::string> resultNames, const Op *before) {
  const OpDef &def = opDef(kind);
  std::vector<OpIssue> issues;
  std::vector<TensorType> operandTypes;
  for (const Value *v : operands) {
    SPYRE_ASSERT(v != nullptr, "null operand for op '" + name + "'");
    operandTypes.push_back(v->type());
  }
  bool complete = completeAttrs(def, attrs, issues);
  std::optional<std::vector<TensorType>> types;
  if (complete)
    types = checkOp(def, operandTypes, attrs, issues);
  SPYRE_ASSERT(types.has_value(),
               "building op '" + name + "' (" + std::string(def.name) +
                   "): " + (issues.empty() ? "" : issues.front().message));
  std::vector<ResultSpec> results;
  for (size_t i = 0; i < types->size(); ++i) {
    std::string rn = i < resultNames.size() && !resultNames[i].empty()
                         ? resultNames[i]
                         : graph.uniqueValueName(
                               types->size() == 1 ? name
                                                  : name + "." + std::to_string(i));
    results.push_back({std::move(rn), (*types)[i]});
  }
  return graph.createOp(kind, std::move(name), std::move(operands),
                        std::move(attrs), std::move(results), before);
}

// ---- Comparison ----

namespace {

std::string compareValue(const Value &a, const Value &b) {
  std::string where = "value %" + a.name();
  if (a.name() != b.name())
    return "value %" + a.name() + " vs %" + b.name();
  if (a.kind() != b.kind())
    return where + ": kinds differ";
  if (a.type() != b.type())
    return where + ": type " + a.type().str() + " vs " + b.type().str();
  if (!(a.annotations() == b.annotations()))
    return where + ": annotations " + a.annotations().str() + " vs " +
           b.annotations().str();
  if (a.isConstant() && (a.constantData().type() != b.constantData().type() ||
                         a.constantData().bytes() != b.constantData().bytes()))
    return where + ": constant data differs";
  return "";
}

std::string valueName(const Value *v) { return v ? "%" + v->name() : "<null>"; }

} // namespace

std::string graphDifference(const Graph &a, const Graph &b) {
  if (a.name() != b.name())
    return "graph names '" + a.name() + "' vs '" + b.name() + "'";
  if (!(a.annotations() == b.annotations()))
    return "graph annotations " + a.annotations().str() + " vs " +
           b.annotations().str();
  auto compareList = [](const std::vector<Value *> &x,
                        const std::vector<Value *> &y,
                        const char *what) -> std::string {
    if (x.size() != y.size())
      return std::string(what) + " counts " + std::to_string(x.size()) + " vs " +
             std::to_string(y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      std::string d = compareValue(*x[i], *y[i]);
      if (!d.empty())
        return std::string(what) + " " + std::to_string(i) + ": " + d;
    }
    return "";
  };
  if (std::string d = compareList(a.inputs(), b.inputs(), "input"); !d.empty())
    return d;
  if (std::string d = compareList(a.constants(), b.constants(), "constant");
      !d.empty())
    return d;
  std::vector<Op *> opsA = a.ops(), opsB = b.ops();
  if (opsA.size() != opsB.size())
    return "op counts " + std::to_string(opsA.size()) + " vs " +
           std::to_string(opsB.size());
  for (size_t i = 0; i < opsA.size(); ++i) {
    const Op &x = *opsA[i], &y = *opsB[i];
    std::string where = "op " + std::to_string(i) + " '" + x.name() + "'";
    if (x.name() != y.name() || x.kind() != y.kind())
      return where + " vs '" + y.name() + "' (" + std::string(x.kindName()) +
             " vs " + std::string(y.kindName()) + ")";
    if (x.numOperands() != y.numOperands())
      return where + ": operand counts differ";
    for (size_t k = 0; k < x.numOperands(); ++k)
      if (valueName(x.operand(k)) != valueName(y.operand(k)))
        return where + ": operand " + std::to_string(k) + " " +
               valueName(x.operand(k)) + " vs " + valueName(y.operand(k));
    if (!(x.attrs() == y.attrs()))
      return where + ": attributes " + x.attrs().str() + " vs " +
             y.attrs().str();
    if (!(x.annotations() == y.annotations()))
      return where + ": annotations " + x.annotations().str() + " vs " +
             y.annotations().str();
    if (std::string d = compareList(x.results(), y.results(), "result");
        !d.empty())
      return where + ": " + d;
  }
  const std::vector<Value *> &outA = a.outputs(), &outB = b.outputs();
  if (outA.size() != outB.size())
    return "output counts " + std::to_string(outA.size()) + " vs " +
           std::to_string(outB.size());
  for (size_t i = 0; i < outA.size(); ++i)
    if (valueName(outA[i]) != valueName(outB[i]))
      return "output " + std::to_string(i) + ": " + valueName(outA[i]) + " vs " +
             valueName(outB[i]);
  return "";
}

// ---- Names ----

namespace {

bool isBareNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$' || c == '-';
}

} // namespace

std::string printName(char sigil, std::string_view name) {
  bool bare = !name.empty() && std::all_of(name.begin(), name.end(), isBareNameChar);
  return std::string(1, sigil) + (bare ? std::string(name) : quoteString(name));
}

SourceLoc graphLoc(const Graph &graph) {
  if (!graph.sourceFile().empty())
    return SourceLoc{graph.sourceFile()};
  return SourceLoc{"<graph " + graph.name() + ">"};
}

} // namespace spyre::compiler
