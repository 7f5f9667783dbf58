#include "compiler/import/GraphJson.h"

#include "compiler/ir/Attribute.h"
#include "compiler/ir/Verifier.h"
#include "numerics/Half.h"
#include "support/FileIO.h"
#include "support/Nesting.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

namespace spyre::compiler {

using Json = nlohmann::ordered_json;

namespace {

// ---- Reading ----

/// A duplicate key found while parsing, with the JSON path of the object.
struct DuplicateKey {
  std::string path;
  std::string key;
};

/// Tracks the JSON path during nlohmann's parse callbacks so that a key
/// given twice (which nlohmann would silently resolve) can be named.
class DuplicateKeyCheck {
public:
  bool operator()(int, Json::parse_event_t event, Json &parsed) {
    switch (event) {
    case Json::parse_event_t::object_start:
    case Json::parse_event_t::array_start:
      countElement();
      frames_.push_back({event == Json::parse_event_t::array_start, -1, "", {}});
      break;
    case Json::parse_event_t::key: {
      Frame &f = frames_.back();
      std::string key = parsed.get<std::string>();
      if (!f.keys.insert(key).second)
        throw DuplicateKey{path(), key};
      f.key = key;
      break;
    }
    case Json::parse_event_t::value:
      countElement();
      break;
    case Json::parse_event_t::object_end:
    case Json::parse_event_t::array_end:
      frames_.pop_back();
      break;
    }
    return true;
  }

private:
  struct Frame {
    bool isArray;
    int64_t index;
    std::string key;
    std::set<std::string> keys;
  };

  void countElement() {
    if (!frames_.empty() && frames_.back().isArray)
      ++frames_.back().index;
  }

  /// Path of the object whose keys are being read (its parents' keys and
  /// indices).
  std::string path() const {
    std::string p;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame &f = frames_[i];
      if (f.isArray)
        p += "[" + std::to_string(f.index) + "]";
      else
        p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }

  std::vector<Frame> frames_;
};

std::string jsonTypeName(const Json &j) {
  if (j.is_number_integer())
    return "integer";
  if (j.is_number_float())
    return "number";
  return j.type_name();
}

std::string child(const std::string &path, const std::string &key) {
  return path.empty() ? key : path + "." + key;
}

std::string index(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

/// An op as written, before its operands are resolved.
struct PendingOp {
  size_t index = 0;
  std::string path;
  std::string name;
  const OpDef *def = nullptr;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  AttrDict attrs;
  bool hasAttrs = false;
  std::set<std::string> writtenAttrs;
};

class GraphJsonReader {
public:
  GraphJsonReader(const std::string &fileName, const std::string &baseDir)
      : fileName_(fileName), baseDir_(baseDir) {}

  std::unique_ptr<Graph> read(std::string_view text) {
    Json root = parseText(text);
    expectObject(root, "");
    checkKeys(root, "",
              {"format", "version", "name", "inputs", "outputs", "constants",
               "ops"});
    std::string format = getString(require(root, "", "format"), "format");
    if (format != kGraphJsonFormat)
      fail("format", "not a graph JSON file: format is '" + format +
                         "', expected '" + kGraphJsonFormat + "'");
    int64_t version = getInt(require(root, "", "version"), "version");
    if (version != kGraphJsonVersion)
      fail("version", "unsupported version " + std::to_string(version) +
                          " (this build reads version " +
                          std::to_string(kGraphJsonVersion) + ")");
    graph_ = std::make_unique<Graph>(getName(require(root, "", "name"), "name"));

    const Json &inputs = require(root, "", "inputs");
    expectArray(inputs, "inputs");
    for (size_t i = 0; i < inputs.size(); ++i)
      readInput(inputs[i], index("inputs", i));
    if (root.contains("constants")) {
      const Json &constants = root["constants"];
      expectArray(constants, "constants");
      for (size_t i = 0; i < constants.size(); ++i)
        readConstant(constants[i], index("constants", i));
    }
    const Json &ops = require(root, "", "ops");
    expectArray(ops, "ops");
    std::vector<PendingOp> pending;
    for (size_t i = 0; i < ops.size(); ++i)
      pending.push_back(readOp(ops[i], i));
    for (size_t i : topologicalOrder(pending))
      buildOp(pending[i]);
    readOutputs(require(root, "", "outputs"));
    return std::move(graph_);
  }

private:
  [[noreturn]] void fail(const std::string &path, std::string message) {
    throw UserError(SourceLoc{fileName_, 0, 0, path}, std::move(message));
  }

  Json parseText(std::string_view text) {
    checkJsonDepth(text, fileName_);
    try {
      return Json::parse(text.begin(), text.end(), DuplicateKeyCheck());
    } catch (const Json::parse_error &e) {
      throw UserError(jsonSyntaxError(e, text));
    } catch (const DuplicateKey &d) {
      fail(d.path, "key '" + d.key + "' is given twice");
    } catch (const Json::out_of_range &e) {
      // A number literal too large for any JSON number type (e.g. 1e405).
      std::string what = e.what();
      size_t at = what.find("] ");
      throw UserError(SourceLoc{fileName_},
                      "invalid JSON: " +
                          (at == std::string::npos ? what : what.substr(at + 2)));
    }
  }

  Diagnostic jsonSyntaxError(const Json::parse_error &e, std::string_view text) {
    // e.byte is the 1-based offset of the last character read.
    size_t end = std::min(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1, col = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
        lineStart = i + 1;
      } else {
        ++col;
      }
    }
    // Keep nlohmann's explanation, without its own prefix and position.
    std::string what = e.what();
    size_t at = what.find("column ");
    if (at != std::string::npos && (at = what.find(": ", at)) != std::string::npos)
      what = what.substr(at + 2);
    Diagnostic d;
    d.loc = SourceLoc{fileName_, line, col};
    d.message = "invalid JSON: " + what;
    size_t lineEnd = text.find('\n', lineStart);
    d.sourceLine = std::string(text.substr(
        lineStart, (lineEnd == std::string_view::npos ? text.size() : lineEnd) -
                       lineStart));
    return d;
  }

  // ---- Typed access ----

  void expectObject(const Json &j, const std::string &path) {
    if (!j.is_object())
      fail(path, "expected an object, got " + jsonTypeName(j));
  }

  void expectArray(const Json &j, const std::string &path) {
    if (!j.is_array())
      fail(path, "expected an array, got " + jsonTypeName(j));
  }

  const Json &require(const Json &obj, const std::string &path,
                      const char *key) {
    if (!obj.contains(key))
      fail(path, std::string("missing field '") + key + "'");
    return obj[key];
  }

  void checkKeys(const Json &obj, const std::string &path,
                 std::initializer_list<const char *> allowed) {
    for (const auto &[key, value] : obj.items()) {
      bool known = false;
      for (const char *a : allowed)
        known |= key == a;
      if (known)
        continue;
      std::string list;
      for (const char *a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
      fail(child(path, key), "unknown field '" + key + "' (expected " + list + ")");
    }
  }

  std::string getString(const Json &j, const std::string &path) {
    if (!j.is_string())
      fail(path, "expected a string, got " + jsonTypeName(j));
    return j.get<std::string>();
  }

  int64_t getInt(const Json &j, const std::string &path) {
    if (j.is_number_unsigned() &&
        j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(path, "integer " + j.dump() + " is out of range");
    if (!j.is_number_integer())
      fail(path, "expected an integer, got " + jsonTypeName(j) + " " + j.dump());
    return j.get<int64_t>();
  }

  std::string getName(const Json &j, const std::string &path) {
    std::string name = getString(j, path);
    if (name.empty())
      fail(path, "a name must not be empty");
    for (char c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        fail(path, "a name must not contain control characters");
    return name;
  }

  ElementType getDtype(const Json &j, const std::string &path) {
    std::string name = getString(j, path);
    std::optional<ElementType> t = parseElementType(name);
    if (!t)
      fail(path, "unknown dtype '" + name + "' (expected " +
                     elementTypeChoices() + ")");
    return *t;
  }

  Shape getShape(const Json &j, const std::string &path) {
    expectArray(j, path);
    Shape shape;
    for (size_t i = 0; i < j.size(); ++i) {
      int64_t d = getInt(j[i], index(path, i));
      if (d < 1)
        fail(index(path, i), "dimension " + std::to_string(d) +
                                 " must be at least 1");
      shape.push_back(d);
    }
    std::string problem = checkShape(shape);
    if (!problem.empty())
      fail(path, problem);
    return shape;
  }

  TensorType getType(const Json &obj, const std::string &path) {
    ElementType et = getDtype(require(obj, path, "dtype"), child(path, "dtype"));
    return {et, getShape(require(obj, path, "shape"), child(path, "shape"))};
  }

  // ---- Tensors ----

  void defineTensor(const std::string &name, const std::string &path) {
    auto [it, inserted] = definedAt_.emplace(name, path);
    if (!inserted)
      fail(path, "tensor '" + name + "' is already defined at '" + it->second +
                     "'");
  }

  void readInput(const Json &j, const std::string &path) {
    expectObject(j, path);
    checkKeys(j, path, {"name", "dtype", "shape"});
    std::string name = getName(require(j, path, "name"), child(path, "name"));
    TensorType type = getType(j, path);
    defineTensor(name, child(path, "name"));
    graph_->addInput(name, type);
  }

  void readConstant(const Json &j, const std::string &path) {
    expectObject(j, path);
    checkKeys(j, path, {"name", "dtype", "shape", "file", "data"});
    std::string name = getName(require(j, path, "name"), child(path, "name"));
    TensorType type = getType(j, path);
    bool hasFile = j.contains("file"), hasData = j.contains("data");
    if (hasFile == hasData)
      fail(path, hasFile ? "give either 'file' or 'data', not both"
                         : "missing field 'file' or 'data'");
    ConstantDataPtr data = hasFile ? readConstantFile(j["file"], child(path, "file"), type)
                                   : readInlineData(j["data"], child(path, "data"), type);
    defineTensor(name, child(path, "name"));
    graph_->addConstant(name, std::move(data));
  }

  ConstantDataPtr readConstantFile(const Json &j, const std::string &path,
                                   const TensorType &type) {
    std::string file = getString(j, path);
    if (file.empty())
      fail(path, "the file name is empty");
    // The model is untrusted input: its files stay in its folder.
    for (char c : file)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        fail(path, "the file name holds a control character");
    std::filesystem::path full(file);
    if (full.is_absolute())
      fail(path, "'" + file + "' is an absolute path; a constant file is "
                 "named relative to the model's folder, inside it");
    for (const std::filesystem::path &part : full)
      if (part == "..")
        fail(path, "'" + file + "' leaves the model's folder ('..'); a "
                   "constant file lies inside it");
    if (full.is_relative() && !baseDir_.empty())
      full = std::filesystem::path(baseDir_) / full;
    NpyArray array;
    try {
      array = readNpy(full.string());
    } catch (const UserError &e) {
      fail(path, "cannot read constant file '" + file + "': " +
                     e.diagnostic().message);
    }
    ElementType got = fromNpyDtype(array.dtype);
    if (got != type.elementType)
      fail(path, "'" + file + "' holds " + std::string(elementTypeName(got)) +
                     " data, the constant is declared " +
                     std::string(elementTypeName(type.elementType)));
    if (array.shape != type.shape)
      fail(path, "'" + file + "' has shape " + shapeStr(array.shape) +
                     ", the constant is declared " + shapeStr(type.shape));
    return ConstantData::fromNpy(array);
  }

  ConstantDataPtr readInlineData(const Json &j, const std::string &path,
                                 const TensorType &type) {
    expectArray(j, path);
    if (static_cast<int64_t>(j.size()) != type.elementCount())
      fail(path, "expected a flat list of " + std::to_string(type.elementCount()) +
                     " numbers for " + type.str() + ", got " +
                     std::to_string(j.size()));
    std::vector<double> values;
    for (size_t i = 0; i < j.size(); ++i) {
      const Json &v = j[i];
      std::string p = index(path, i);
      if (isFloatType(type.elementType)) {
        if (!v.is_number())
          fail(p, "expected a number, got " + jsonTypeName(v));
        // Rounded once, from the double nlohmann parsed, to the element type.
        values.push_back(static_cast<double>(static_cast<float>(v.get<double>())));
        if (!std::isfinite(values.back()))
          fail(p, v.dump() + " is out of range for " + type.str());
        continue;
      }
      int64_t x = getInt(v, p);
      int64_t lo = type.elementType == ElementType::I8
                       ? -128
                       : std::numeric_limits<int32_t>::min();
      int64_t hi = type.elementType == ElementType::I8
                       ? 127
                       : std::numeric_limits<int32_t>::max();
      if (x < lo || x > hi)
        fail(p, std::to_string(x) + " is out of range for " +
                    std::string(elementTypeName(type.elementType)));
      values.push_back(static_cast<double>(x));
    }
    return ConstantData::fromDoubles(type, values);
  }

  // ---- Ops ----

  Attribute readAttr(const Json &j, const std::string &path,
                     const AttrSpec &spec, const std::string &prefix) {
    auto wrong = [&]() {
      fail(path, prefix + "attribute '" + std::string(spec.name) + "' must be " +
                     (attrTypeName(spec.type)[0] == 'i' ? "an " : "a ") +
                     std::string(attrTypeName(spec.type)) + ", got " +
                     jsonTypeName(j) + " " + j.dump());
    };
    switch (spec.type) {
    case AttrType::Int:
      if (!j.is_number_integer())
        wrong();
      return getInt(j, path);
    case AttrType::Float:
      if (!j.is_number())
        wrong();
      return j.get<double>();
    case AttrType::Bool:
      if (!j.is_boolean())
        wrong();
      return j.get<bool>();
    case AttrType::String:
      if (!j.is_string())
        wrong();
      return j.get<std::string>();
    case AttrType::IntList: {
      if (!j.is_array())
        wrong();
      std::vector<int64_t> values;
      for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_number_integer())
          wrong();
        values.push_back(getInt(j[i], index(path, i)));
      }
      return Attribute::ints(values);
    }
    case AttrType::FloatList: {
      if (!j.is_array())
        wrong();
      std::vector<double> values;
      for (const Json &e : j) {
        if (!e.is_number())
          wrong();
        values.push_back(e.get<double>());
      }
      return Attribute::floats(values);
    }
    }
    SPYRE_UNREACHABLE("bad attribute type");
  }

  Attribute genericAttr(const Json &j, const std::string &path, int depth = 0) {
    constexpr int kMaxDepth = 64;
    if (depth >= kMaxDepth)
      fail(path, "attributes nest deeper than " + std::to_string(kMaxDepth) +
                     " levels");
    if (j.is_number_integer())
      return getInt(j, path);
    if (j.is_number())
      return j.get<double>();
    if (j.is_boolean())
      return j.get<bool>();
    if (j.is_string())
      return j.get<std::string>();
    if (j.is_array()) {
      Attribute::List elements;
      for (size_t i = 0; i < j.size(); ++i)
        elements.push_back(genericAttr(j[i], index(path, i), depth + 1));
      return Attribute::list(std::move(elements));
    }
    if (j.is_object()) {
      AttrDict dict;
      for (const auto &[key, value] : j.items())
        dict.set(key, genericAttr(value, child(path, key), depth + 1));
      return dict;
    }
    fail(path, "null is not an attribute value");
  }

  PendingOp readOp(const Json &j, size_t i) {
    PendingOp op;
    op.index = i;
    op.path = index("ops", i);
    const std::string &path = op.path;
    expectObject(j, path);
    checkKeys(j, path, {"name", "op", "inputs", "outputs", "attrs"});
    op.name = getName(require(j, path, "name"), child(path, "name"));
    if (auto it = opDefinedAt_.find(op.name); it != opDefinedAt_.end())
      fail(child(path, "name"), "op '" + op.name + "' is already defined at '" +
                                    it->second + "'");
    opDefinedAt_.emplace(op.name, child(path, "name"));
    std::string kind = getString(require(j, path, "op"), child(path, "op"));
    op.def = findOpDef(kind);
    if (!op.def)
      fail(child(path, "op"), "unknown op '" + kind + "' (see docs/ir.md for the ops)");

    const Json &inputs = require(j, path, "inputs");
    expectArray(inputs, child(path, "inputs"));
    for (size_t k = 0; k < inputs.size(); ++k)
      op.inputs.push_back(getName(inputs[k], index(child(path, "inputs"), k)));
    const Json &outputs = require(j, path, "outputs");
    expectArray(outputs, child(path, "outputs"));
    if (outputs.empty())
      fail(child(path, "outputs"), "an op needs at least one output");
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::string p = index(child(path, "outputs"), k);
      op.outputs.push_back(getName(outputs[k], p));
      defineTensor(op.outputs.back(), p);
    }

    std::string prefix = "op '" + op.name + "' (" + std::string(op.def->name) + "): ";
    if (j.contains("attrs")) {
      op.hasAttrs = true;
      const Json &attrs = j["attrs"];
      expectObject(attrs, child(path, "attrs"));
      for (const auto &[key, value] : attrs.items()) {
        std::string p = child(child(path, "attrs"), key);
        // An attribute the schema does not have is kept as written, for
        // completeAttrs to report in the schema's words.
        const AttrSpec *spec = op.def->findAttr(key);
        op.attrs.set(key, spec ? readAttr(value, p, *spec, prefix)
                               : genericAttr(value, p));
        op.writtenAttrs.insert(key);
      }
    }
    std::vector<OpIssue> issues;
    if (!completeAttrs(*op.def, op.attrs, issues))
      fail(issuePath(op, issues.front()), prefix + issues.front().message);
    return op;
  }

  std::string issuePath(const PendingOp &op, const OpIssue &issue) {
    switch (issue.target) {
    case OpIssue::Target::Operand:
      if (issue.index >= 0 && static_cast<size_t>(issue.index) < op.inputs.size())
        return index(child(op.path, "inputs"), static_cast<size_t>(issue.index));
      return child(op.path, "inputs");
    case OpIssue::Target::Attr:
      if (op.writtenAttrs.contains(issue.attr))
        return child(child(op.path, "attrs"), issue.attr);
      return op.hasAttrs ? child(op.path, "attrs") : op.path;
    case OpIssue::Target::Result:
      return child(op.path, "outputs");
    case OpIssue::Target::Op:
      if (issue.message.rfind("expects ", 0) == 0)
        return child(op.path, "inputs");
      return op.path;
    }
    return op.path;
  }

  /// Kahn's algorithm, always taking the lowest-numbered ready op, so a file
  /// already in order keeps its order. Unknown tensors and cycles are errors.
  std::vector<size_t> topologicalOrder(const std::vector<PendingOp> &ops) {
    std::map<std::string, size_t> producer;
    for (const PendingOp &op : ops)
      for (const std::string &out : op.outputs)
        producer.emplace(out, op.index);
    std::vector<size_t> waiting(ops.size(), 0);
    std::vector<std::vector<size_t>> users(ops.size());
    for (const PendingOp &op : ops)
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const std::string &name = op.inputs[k];
        auto it = producer.find(name);
        if (it != producer.end()) {
          ++waiting[op.index];
          users[it->second].push_back(op.index);
          continue;
        }
        if (!graph_->findValue(name))
          fail(index(child(op.path, "inputs"), k),
               "unknown tensor '" + name +
                   "' (not an input, a constant or an op output)");
      }
    std::set<size_t> ready;
    for (size_t i = 0; i < ops.size(); ++i)
      if (waiting[i] == 0)
        ready.insert(i);
    std::vector<size_t> order;
    while (!ready.empty()) {
      size_t i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (size_t u : users[i])
        if (--waiting[u] == 0)
          ready.insert(u);
    }
    if (order.size() != ops.size())
      reportCycle(ops, waiting, producer);
    return order;
  }

  [[noreturn]] void reportCycle(const std::vector<PendingOp> &ops,
                                const std::vector<size_t> &waiting,
                                const std::map<std::string, size_t> &producer) {
    // Every op still waiting uses a result of another waiting op, so walking
    // from one to the producer of its first waiting input must come back
    // around.
    size_t start = 0;
    while (waiting[start] == 0)
      ++start;
    std::vector<size_t> walk;
    std::vector<std::string> via;
    std::vector<int> seenAt(ops.size(), -1);
    size_t cur = start;
    while (seenAt[cur] < 0) {
      seenAt[cur] = static_cast<int>(walk.size());
      walk.push_back(cur);
      for (const std::string &name : ops[cur].inputs) {
        auto it = producer.find(name);
        if (it != producer.end() && waiting[it->second] > 0) {
          via.push_back(name);
          cur = it->second;
          break;
        }
      }
    }
    size_t from = static_cast<size_t>(seenAt[cur]);
    std::string text;
    for (size_t k = from; k < walk.size(); ++k)
      text += (k > from ? ", " : "") + std::string("'") + ops[walk[k]].name +
              "' uses '" + via[k] + "' from '" +
              ops[k + 1 < walk.size() ? walk[k + 1] : walk[from]].name + "'";
    fail(ops[walk[from]].path, "ops form a cycle: " + text);
  }

  void buildOp(PendingOp &op) {
    std::vector<Value *> operands;
    std::vector<TensorType> types;
    for (const std::string &name : op.inputs) {
      Value *v = graph_->findValue(name);
      SPYRE_ASSERT(v != nullptr, "operand resolved before ordering");
      operands.push_back(v);
      types.push_back(v->type());
    }
    std::vector<OpIssue> issues;
    std::optional<std::vector<TensorType>> results =
        checkOp(*op.def, types, op.attrs, issues);
    std::string prefix = "op '" + op.name + "' (" + std::string(op.def->name) + "): ";
    if (!results)
      fail(issuePath(op, issues.front()), prefix + issues.front().message);
    if (results->size() != op.outputs.size())
      fail(child(op.path, "outputs"),
           prefix + std::string(op.def->name) + " gives " +
               std::to_string(results->size()) + " result" +
               (results->size() == 1 ? "" : "s") + ", " +
               std::to_string(op.outputs.size()) + " output name" +
               (op.outputs.size() == 1 ? " is" : "s are") + " given");
    std::vector<ResultSpec> specs;
    for (size_t i = 0; i < results->size(); ++i)
      specs.push_back({op.outputs[i], (*results)[i]});
    Op *created = graph_->createOp(op.def->kind, op.name, std::move(operands),
                                   std::move(op.attrs), std::move(specs));
    created->setLoc(SourceLoc{fileName_, 0, 0, op.path});
  }

  void readOutputs(const Json &j) {
    expectArray(j, "outputs");
    if (j.empty())
      fail("outputs", "a graph needs at least one output");
    std::vector<Value *> outputs;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string p = index("outputs", i);
      std::string name = getName(j[i], p);
      Value *v = graph_->findValue(name);
      if (!v)
        fail(p, "unknown tensor '" + name + "'");
      if (std::find(outputs.begin(), outputs.end(), v) != outputs.end())
        fail(p, "tensor '" + name + "' is listed twice");
      outputs.push_back(v);
    }
    graph_->setOutputs(std::move(outputs));
  }

  const std::string &fileName_;
  const std::string &baseDir_;
  std::unique_ptr<Graph> graph_;
  std::map<std::string, std::string> definedAt_;
  std::map<std::string, std::string> opDefinedAt_;
};

// ---- Writing ----

/// The number nlohmann should hold for a float32 element so that reading
/// the text back (decimal -> double -> float) gives exactly `f`: the
/// shortest float text when it survives that double rounding, else the
/// exact double value of `f`.
double jsonNumberForFloat(float f) {
  std::string text = formatFloat(f);
  double d = std::strtod(text.c_str(), nullptr);
  return static_cast<float>(d) == f ? d : static_cast<double>(f);
}

Json attrToJson(const Attribute &a) {
  switch (a.kind()) {
  case Attribute::Kind::Int:
    return a.asInt();
  case Attribute::Kind::Float:
    return a.asFloat();
  case Attribute::Kind::Bool:
    return a.asBool();
  case Attribute::Kind::String:
    return a.asString();
  case Attribute::Kind::List: {
    Json arr = Json::array();
    for (const Attribute &e : a.asList())
      arr.push_back(attrToJson(e));
    return arr;
  }
  case Attribute::Kind::Dict: {
    Json obj = Json::object();
    for (const NamedAttribute &e : a.asDict())
      obj[e.name] = attrToJson(e.value);
    return obj;
  }
  }
  SPYRE_UNREACHABLE("bad attribute kind");
}

std::string scalarText(const Json &j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string oneLine(const Json &j) {
  if (j.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto &[k, v] : j.items()) {
      out += (first ? "" : ", ") + scalarText(Json(k)) + ": " + oneLine(v);
      first = false;
    }
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < j.size(); ++i)
      out += (i ? ", " : "") + oneLine(j[i]);
    return out + "]";
  }
  return scalarText(j);
}

constexpr size_t kLineWidth = 100;

/// Pretty JSON that stays readable for models: anything that fits on its
/// line stays on one line; long arrays of numbers wrap like text.
std::string pretty(const Json &j, size_t indent, size_t used) {
  std::string flat = oneLine(j);
  if (used + flat.size() <= kLineWidth || (!j.is_object() && !j.is_array()))
    return flat;
  std::string pad(indent + 2, ' ');
  std::string out;
  if (j.is_object()) {
    out = "{\n";
    bool first = true;
    for (const auto &[k, v] : j.items()) {
      std::string key = scalarText(Json(k)) + ": ";
      out += (first ? "" : ",\n") + pad + key +
             pretty(v, indent + 2, indent + 2 + key.size());
      first = false;
    }
    return out + "\n" + std::string(indent, ' ') + "}";
  }
  bool scalars = std::all_of(j.begin(), j.end(), [](const Json &e) {
    return !e.is_object() && !e.is_array();
  });
  out = "[\n";
  if (scalars) {
    std::string line = pad;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string item = scalarText(j[i]) + (i + 1 < j.size() ? "," : "");
      if (line.size() > pad.size() && line.size() + 1 + item.size() > kLineWidth) {
        out += line + "\n";
        line = pad;
      }
      line += (line.size() > pad.size() ? " " : "") + item;
    }
    out += line;
  } else {
    for (size_t i = 0; i < j.size(); ++i)
      out += (i ? ",\n" : "") + pad + pretty(j[i], indent + 2, indent + 2);
  }
  return out + "\n" + std::string(indent, ' ') + "]";
}

} // namespace

std::unique_ptr<Graph> parseGraphJson(std::string_view text,
                                      const std::string &fileName,
                                      const std::string &baseDir,
                                      DiagnosticEngine &diags) {
  std::unique_ptr<Graph> graph;
  try {
    graph = GraphJsonReader(fileName, baseDir).read(text);
    graph->setSourceFile(fileName);
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return nullptr;
  }
  if (!verifyGraph(*graph, diags))
    return nullptr;
  return graph;
}

std::unique_ptr<Graph> loadGraphJson(const std::string &path,
                                     DiagnosticEngine &diags) {
  std::string text;
  try {
    text = readFile(path, kJsonFileLimit);
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return nullptr;
  }
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  return parseGraphJson(text, path, baseDir, diags);
}

std::unique_ptr<Graph> loadGraphJsonOrThrow(const std::string &path) {
  DiagnosticEngine diags;
  std::unique_ptr<Graph> graph = loadGraphJson(path, diags);
  diags.throwIfErrors();
  return graph;
}

std::string tensorFileName(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                (c == '.' && !out.empty());
    out += keep ? c : '_';
  }
  return out + ".npy";
}

GraphJsonFiles serializeGraphJson(const Graph &graph,
                                  const GraphJsonWriteOptions &options) {
  GraphJsonFiles files;
  Json root = Json::object();
  root["format"] = kGraphJsonFormat;
  root["version"] = kGraphJsonVersion;
  root["name"] = graph.name();
  root["inputs"] = Json::array();
  for (const Value *v : graph.inputs())
    root["inputs"].push_back(
        {{"name", v->name()},
         {"dtype", std::string(elementTypeName(v->type().elementType))},
         {"shape", v->type().shape}});
  root["outputs"] = Json::array();
  for (const Value *v : graph.outputs())
    root["outputs"].push_back(v->name());
  root["constants"] = Json::array();
  std::set<std::string> usedFiles;
  for (const Value *v : graph.constants()) {
    const ConstantData &data = v->constantData();
    Json c = {{"name", v->name()},
              {"dtype", std::string(elementTypeName(data.type().elementType))},
              {"shape", data.type().shape}};
    std::vector<double> values = data.toDoubles();
    bool finite = std::all_of(values.begin(), values.end(),
                              [](double x) { return std::isfinite(x); });
    if (finite && data.type().elementCount() <= options.inlineLimit) {
      Json arr = Json::array();
      for (double x : values) {
        if (!isFloatType(data.type().elementType))
          arr.push_back(static_cast<int64_t>(x));
        else
          arr.push_back(jsonNumberForFloat(static_cast<float>(x)));
      }
      c["data"] = std::move(arr);
    } else {
      std::string file = tensorFileName(v->name());
      for (int k = 1; usedFiles.contains(file); ++k)
        file = tensorFileName(v->name() + "_" + std::to_string(k));
      usedFiles.insert(file);
      c["file"] = file;
      files.constantFiles.emplace_back(file, data.toNpy());
    }
    root["constants"].push_back(std::move(c));
  }
  root["ops"] = Json::array();
  for (const Op *op : graph.ops()) {
    Json o = Json::object();
    o["name"] = op->name();
    o["op"] = std::string(op->kindName());
    o["inputs"] = Json::array();
    for (const Value *v : op->operands())
      o["inputs"].push_back(v->name());
    o["outputs"] = Json::array();
    for (const Value *v : op->results())
      o["outputs"].push_back(v->name());
    if (!op->attrs().empty()) {
      Json attrs = Json::object();
      for (const NamedAttribute &a : op->attrs())
        attrs[a.name] = attrToJson(a.value);
      o["attrs"] = std::move(attrs);
    }
    root["ops"].push_back(std::move(o));
  }
  files.json = pretty(root, 0, 0) + "\n";
  return files;
}

void writeGraphJson(const Graph &graph, const std::string &path,
                    const GraphJsonWriteOptions &options) {
  GraphJsonFiles files = serializeGraphJson(graph, options);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (const auto &[name, array] : files.constantFiles)
    writeNpy((dir / name).string(), array);
  writeFileAtomic(path, files.json);
}

} // namespace spyre::compiler
