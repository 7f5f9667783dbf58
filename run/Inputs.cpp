// Reading a run's inputs folder and making random inputs (Inputs.h).
#include "run/Inputs.h"

#include "compiler/import/GraphJson.h"
#include "compiler/import/OnnxTensor.h"
#include "compiler/ref/Evaluator.h"
#include "compiler/ref/Random.h"
#include "numerics/Half.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

namespace spyre::run {

namespace {

namespace fs = std::filesystem;
using compiler::ElementType;
using compiler::Value;
using onnx::TensorProto;

std::string joinPath(const std::string &dir, const std::string &name) {
  return (fs::path(dir) / name).string();
}

std::string plural(size_t n, const std::string &word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// `x, mask`: names for messages.
std::string nameList(const std::vector<Value *> &values) {
  std::string out;
  for (const Value *v : values)
    out += (out.empty() ? "" : ", ") + v->name();
  return out.empty() ? "none" : out;
}

/// What the device takes for an input of `type`, in the words of the format.
std::string acceptedText(ElementType type, bool onnx) {
  switch (type) {
  case ElementType::F32:
  case ElementType::F16:
    return onnx ? "FLOAT or FLOAT16" : "float32 or float16";
  case ElementType::I8:
    return onnx ? "INT8" : "int8";
  case ElementType::I32:
    return onnx ? "INT32 or INT64" : "int32 or int64";
  }
  SPYRE_UNREACHABLE("element type");
}

bool acceptsNpy(ElementType type, NpyDtype dtype) {
  if (compiler::isFloatType(type))
    return dtype == NpyDtype::F32 || dtype == NpyDtype::F16;
  return dtype == compiler::toNpyDtype(type);
}

/// The .npy dtype an accepted ONNX element type is held in, or nullopt.
std::optional<NpyDtype> npyDtypeOfOnnx(ElementType type, int32_t dataType) {
  if (compiler::isFloatType(type)) {
    if (dataType == TensorProto::FLOAT)
      return NpyDtype::F32;
    if (dataType == TensorProto::FLOAT16)
      return NpyDtype::F16;
    return std::nullopt;
  }
  if (type == ElementType::I8 && dataType == TensorProto::INT8)
    return NpyDtype::I8;
  // Ids are INT64 as exporters write them, held as i32 (checked to fit).
  if (type == ElementType::I32 &&
      (dataType == TensorProto::INT32 || dataType == TensorProto::INT64))
    return NpyDtype::I32;
  return std::nullopt;
}

/// The values of an ONNX tensor as a .npy array of `dtype` (exact: the values
/// came from that type).
NpyArray npyFromOnnx(const compiler::OnnxTensorValues &t, NpyDtype dtype) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = t.dims;
  const size_t size = static_cast<size_t>(npyDtypeSize(dtype));
  a.data.resize(t.values.size() * size);
  for (size_t i = 0; i < t.values.size(); ++i) {
    char *p = a.data.data() + i * size;
    switch (dtype) {
    case NpyDtype::F32: {
      auto f = static_cast<float>(t.values[i]);
      std::memcpy(p, &f, 4);
      break;
    }
    case NpyDtype::F16: {
      uint16_t h = half::floatToHalf(static_cast<float>(t.values[i]));
      std::memcpy(p, &h, 2);
      break;
    }
    case NpyDtype::I8:
      *p = static_cast<char>(static_cast<int8_t>(t.ints[i]));
      break;
    case NpyDtype::I32: {
      auto v = static_cast<int32_t>(t.ints[i]);
      std::memcpy(p, &v, 4);
      break;
    }
    }
  }
  return a;
}

/// A TensorProto file's values; a file that is empty, does not parse or
/// holds no numbers is a UserError naming it.
compiler::OnnxTensorValues readPb(const std::string &path, std::string &name) {
  const std::string bytes = readFile(path, kOnnxTensorFileLimit);
  if (bytes.empty())
    throw UserError(SourceLoc{path},
                    "the file is empty; expected an ONNX TensorProto");
  TensorProto proto;
  if (!proto.ParseFromString(bytes))
    throw UserError(SourceLoc{path}, "not an ONNX tensor: the file does not "
                                     "parse as an ONNX TensorProto (protobuf)");
  std::string why;
  std::optional<compiler::OnnxTensorValues> t =
      compiler::readOnnxTensor(proto, why);
  if (!t)
    throw UserError(SourceLoc{path}, why);
  name = proto.name();
  return *t;
}

/// Refuses two tensors whose names give one file.
void checkDistinctFiles(
    const std::vector<std::pair<std::string, std::string>> &files,
    const std::string &dir) {
  std::map<std::string, std::string> owner;
  for (const auto &[tensor, file] : files) {
    auto [it, fresh] = owner.emplace(file, tensor);
    if (!fresh && it->second != tensor)
      throw UserError(SourceLoc{dir}, "tensors '" + it->second + "' and '" +
                                          tensor +
                                          "' would both be read from " + file);
  }
}

void checkShape(const std::string &path, const char *what, const Value &v,
                const std::vector<int64_t> &shape, const char *modelWord) {
  if (shape != v.type().shape)
    throw UserError(SourceLoc{path}, std::string(what) + " '" + v.name() +
                                         "' has shape " + shapeText(shape) +
                                         " but the model " + modelWord + " " +
                                         shapeText(v.type().shape));
}

/// An input array of the model's shape and of a dtype the device takes.
void checkNpyInput(const SourceLoc &loc, const Value &v,
                   const NpyArray &array) {
  if (array.shape != v.type().shape)
    throw UserError(loc, "input '" + v.name() + "' has shape " +
                             shapeText(array.shape) +
                             " but the model expects " +
                             shapeText(v.type().shape));
  if (!acceptsNpy(v.type().elementType, array.dtype))
    throw UserError(
        loc, "input '" + v.name() + "' is " + npyDtypeName(array.dtype) +
                 " but the model's " +
                 std::string(compiler::elementTypeName(v.type().elementType)) +
                 " input needs " + acceptedText(v.type().elementType, false));
}

ModelInputs readNpyFolder(const compiler::Graph &graph, const std::string &dir,
                          const std::vector<std::string> &entries,
                          bool modelFolder) {
  ModelInputs in;
  in.kind = InputsKind::Npy;
  in.dir = dir;
  const std::vector<Value *> inputs = graph.inputs();
  std::vector<std::pair<std::string, std::string>> names;
  std::map<std::string, const Value *> byFile;
  for (const Value *v : inputs) {
    names.emplace_back(v->name(), inputFileName(v->name()));
    byFile[inputFileName(v->name())] = v;
  }
  checkDistinctFiles(names, dir);
  names.clear();
  std::map<std::string, const Value *> expectedByFile;
  for (const Value *v : graph.outputs()) {
    names.emplace_back(v->name(), expectedFileName(v->name()));
    expectedByFile[expectedFileName(v->name())] = v;
  }
  checkDistinctFiles(names, dir);

  for (const std::string &name : entries) {
    if (modelFolder)
      break;
    const std::string path = joinPath(dir, name);
    if (name.size() < 5 || name.substr(name.size() - 4) != ".npy")
      throw UserError(SourceLoc{path},
                      "not a .npy file; the inputs folder holds NAME.npy per "
                      "model input and expected_NAME.npy per output, or ONNX "
                      "test data (input_N.pb, output_N.pb)");
    if (!byFile.count(name) && !expectedByFile.count(name))
      throw UserError(
          SourceLoc{path},
          "names no input of the model (inputs: " + nameList(inputs) +
              ") and no expected output (outputs: " +
              nameList(graph.outputs()) + ", as expected_NAME.npy)");
  }
  for (const Value *v : inputs) {
    const std::string path = joinPath(dir, inputFileName(v->name()));
    if (std::find(entries.begin(), entries.end(), inputFileName(v->name())) ==
        entries.end())
      throw UserError(SourceLoc{path},
                      "missing input '" + v->name() + "' (expected this file)");
    NpyArray array = readNpy(path);
    checkNpyInput(SourceLoc{path}, *v, array);
    in.files[v->name()] = path;
    in.arrays[v->name()] = std::move(array);
  }
  for (const auto &[file, v] : expectedByFile) {
    if (std::find(entries.begin(), entries.end(), file) == entries.end())
      continue;
    const std::string path = joinPath(dir, file);
    NpyArray array = readNpy(path);
    checkShape(path, "expected output", *v, array.shape, "gives");
    in.expected[v->name()] = {path, compiler::ref::tensorFromNpy(array).values};
  }
  return in;
}

/// `input_3.pb` -> 3 when `name` is PREFIX_N.pb with a plain decimal N.
std::optional<size_t> pbIndex(const std::string &name,
                              const std::string &prefix) {
  if (name.size() <= prefix.size() + 3 ||
      name.compare(0, prefix.size(), prefix) != 0 ||
      name.substr(name.size() - 3) != ".pb")
    return std::nullopt;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - 3);
  if (digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  return static_cast<size_t>(std::stoul(digits));
}

std::string pbRange(const std::string &prefix, size_t count) {
  if (count == 1)
    return prefix + "0.pb";
  return prefix + "0.pb to " + prefix + std::to_string(count - 1) + ".pb";
}

/// input_N.pb / output_N.pb: a named tensor must be the model's N-th.
void checkPbName(const std::string &path, const std::string &tensorName,
                 const char *what, size_t index, const Value &v) {
  if (!tensorName.empty() && tensorName != v.name())
    throw UserError(SourceLoc{path}, "holds tensor '" + tensorName + "' but " +
                                         what + " " + std::to_string(index) +
                                         " of the model is '" + v.name() + "'");
}

ModelInputs readOnnxFolder(const compiler::Graph &graph, const std::string &dir,
                           const std::vector<std::string> &entries,
                           bool modelFolder) {
  ModelInputs in;
  in.kind = InputsKind::OnnxTestData;
  in.dir = dir;
  const std::vector<Value *> inputs = graph.inputs();
  const std::vector<Value *> &outputs = graph.outputs();
  for (const std::string &name : entries) {
    const std::string path = joinPath(dir, name);
    std::optional<size_t> i = pbIndex(name, "input_");
    std::optional<size_t> o = pbIndex(name, "output_");
    if (!i && !o && modelFolder)
      continue;
    if (!i && !o)
      throw UserError(
          SourceLoc{path},
          "not an ONNX test-data file; a folder with .pb files holds "
          "input_N.pb per model input and output_N.pb per output");
    if (i && *i >= inputs.size())
      throw UserError(
          SourceLoc{path},
          "the model has " + plural(inputs.size(), "input") +
              (inputs.empty() ? ""
                              : " (" + pbRange("input_", inputs.size()) + ")"));
    if (o && *o >= outputs.size())
      throw UserError(SourceLoc{path},
                      "the model has " + plural(outputs.size(), "output") +
                          " (" + pbRange("output_", outputs.size()) + ")");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value &v = *inputs[i];
    const std::string file = "input_" + std::to_string(i) + ".pb";
    const std::string path = joinPath(dir, file);
    if (std::find(entries.begin(), entries.end(), file) == entries.end())
      throw UserError(SourceLoc{path},
                      "missing input '" + v.name() + "' (input " +
                          std::to_string(i) +
                          " of the model; expected this file)");
    std::string tensorName;
    compiler::OnnxTensorValues t = readPb(path, tensorName);
    checkPbName(path, tensorName, "input", i, v);
    checkShape(path, "input", v, t.dims, "expects");
    std::optional<NpyDtype> dtype =
        npyDtypeOfOnnx(v.type().elementType, t.dataType);
    if (!dtype)
      throw UserError(
          SourceLoc{path},
          "input '" + v.name() + "' is " + compiler::onnxTypeName(t.dataType) +
              " but the model's " +
              std::string(compiler::elementTypeName(v.type().elementType)) +
              " input needs " + acceptedText(v.type().elementType, true));
    if (*dtype == NpyDtype::I32)
      for (size_t k = 0; k < t.ints.size(); ++k)
        if (t.ints[k] < std::numeric_limits<int32_t>::min() ||
            t.ints[k] > std::numeric_limits<int32_t>::max())
          throw UserError(SourceLoc{path},
                          "input '" + v.name() + "': element " +
                              std::to_string(k) + " is " +
                              std::to_string(t.ints[k]) +
                              ", outside int32, which the device holds ids in");
    in.files[v.name()] = path;
    in.arrays[v.name()] = npyFromOnnx(t, *dtype);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Value &v = *outputs[o];
    const std::string file = "output_" + std::to_string(o) + ".pb";
    if (std::find(entries.begin(), entries.end(), file) == entries.end())
      continue;
    const std::string path = joinPath(dir, file);
    std::string tensorName;
    compiler::OnnxTensorValues t = readPb(path, tensorName);
    checkPbName(path, tensorName, "output", o, v);
    checkShape(path, "expected output", v, t.dims, "gives");
    in.expected[v.name()] = {path, std::move(t.values)};
  }
  return in;
}

} // namespace

std::string inputFileName(const std::string &input) {
  return compiler::tensorFileName(input);
}

std::string expectedFileName(const std::string &output) {
  return "expected_" + compiler::tensorFileName(output);
}

ModelInputs readInputsFolder(const compiler::Graph &graph,
                             const std::string &dir, bool modelFolder) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    throw UserError(SourceLoc{dir}, "inputs folder does not exist");
  if (!fs::is_directory(dir, ec))
    throw UserError(SourceLoc{dir},
                    "not a folder; --inputs names a folder of input files");
  std::vector<std::string> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    entries.push_back(it->path().filename().string());
  if (ec)
    throw UserError(SourceLoc{dir},
                    "cannot list the inputs folder: " + ec.message());
  std::sort(entries.begin(), entries.end());
  const bool onnx =
      std::any_of(entries.begin(), entries.end(), [](const std::string &e) {
        return e.size() > 3 && e.substr(e.size() - 3) == ".pb";
      });
  return onnx ? readOnnxFolder(graph, dir, entries, modelFolder)
              : readNpyFolder(graph, dir, entries, modelFolder);
}

ModelInputs givenInputs(const compiler::Graph &graph,
                        std::map<std::string, NpyArray> arrays,
                        const std::string &where) {
  ModelInputs in;
  in.kind = InputsKind::Given;
  const std::vector<Value *> inputs = graph.inputs();
  for (const auto &entry : arrays) {
    // Named, not bound: clang 14 (the fuzz build) cannot capture a
    // structured binding in a lambda.
    const std::string &name = entry.first;
    if (std::none_of(inputs.begin(), inputs.end(),
                     [&](const Value *v) { return v->name() == name; }))
      throw UserError(SourceLoc{where, 0, 0, name},
                      "names no input of the model (inputs: " +
                          nameList(inputs) + ")");
  }
  for (const Value *v : inputs) {
    auto it = arrays.find(v->name());
    const SourceLoc loc{where, 0, 0, v->name()};
    if (it == arrays.end())
      throw UserError(loc, "missing input '" + v->name() + "' (inputs: " +
                               nameList(inputs) + ")");
    checkNpyInput(loc, *v, it->second);
    in.arrays[v->name()] = std::move(it->second);
  }
  return in;
}

ModelInputs randomInputs(const compiler::Graph &graph, uint64_t seed) {
  ModelInputs in;
  in.kind = InputsKind::Random;
  in.seed = seed;
  for (const Value *v : graph.inputs()) {
    // An input read only as the ids of embedding lookups gets ids of the
    // smallest of their tables, so that a random run is a valid one.
    int64_t idBound = 0;
    const std::vector<compiler::OpUse> uses = graph.usesOf(v);
    for (const compiler::OpUse &u : uses) {
      if (u.op->kind() != compiler::OpKind::Embedding || u.operandIndex != 1) {
        idBound = 0;
        break;
      }
      const int64_t rows = u.op->operand(0)->type().shape.front();
      idBound = idBound == 0 ? rows : std::min(idBound, rows);
    }
    in.arrays[v->name()] =
        compiler::ref::randomInput(v->type(), seed, v->name(), idBound);
  }
  return in;
}

} // namespace spyre::run
