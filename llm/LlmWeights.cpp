#include "llm/LlmWeights.h"

#include "compiler/ref/Evaluator.h"
#include "numerics/Half.h"
#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <cmath>
#include <cstring>
#include <filesystem>

namespace spyre::llm {

namespace {

namespace fs = std::filesystem;
using compiler::ElementType;
using compiler::TensorType;
using compiler::Value;

bool endsWith(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() &&
         s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The shape the checkpoint holds a graph input of shape `dims` in.
std::vector<int64_t> storedShape(const WeightName &w,
                                 const std::vector<int64_t> &dims) {
  return w.transposed ? std::vector<int64_t>(dims.rbegin(), dims.rend()) : dims;
}

std::vector<double> decode(const SafetensorsTensor &t,
                           const std::string &bytes) {
  const auto n = static_cast<size_t>(t.elementCount());
  std::vector<double> out(n);
  switch (t.dtype) {
  case SafetensorsDtype::F32:
    for (size_t i = 0; i < n; ++i) {
      float f = 0;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      out[i] = f;
    }
    break;
  case SafetensorsDtype::F16:
    for (size_t i = 0; i < n; ++i) {
      uint16_t h = 0;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      out[i] = half::halfToFloat(h);
    }
    break;
  case SafetensorsDtype::BF16:
    // bfloat16 is the top half of a float32.
    for (size_t i = 0; i < n; ++i) {
      uint16_t b = 0;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(b) << 16;
      float f = 0;
      std::memcpy(&f, &bits, 4);
      out[i] = f;
    }
    break;
  }
  return out;
}

/// The weight inputs of `graph` with their checkpoint names, in order.
std::vector<std::pair<const Value *, WeightName>>
weightsOf(const compiler::Graph &graph) {
  std::vector<std::pair<const Value *, WeightName>> out;
  for (const Value *v : graph.inputs())
    if (std::optional<WeightName> w = checkpointNameOf(v->name()))
      out.emplace_back(v, *w);
  return out;
}

} // namespace

Checkpoint::Checkpoint(const std::string &path) : path_(path) {
  std::error_code ec;
  const fs::path dir(path);
  const bool folder = fs::is_directory(dir, ec);
  if (folder && fs::exists(dir / kSafetensorsIndexName, ec)) {
    openShards((dir / kSafetensorsIndexName).string());
    return;
  }
  if (folder && !fs::exists(dir / kSafetensorsFileName, ec)) {
    openNpyFolder();
    return;
  }
  files_.push_back(readSafetensorsHeader(
      folder ? (dir / kSafetensorsFileName).string() : path));
  for (const auto &[name, tensor] : files_.front().tensors)
    fileOf_.emplace(name, 0);
}

void Checkpoint::openShards(const std::string &indexPath) {
  const SafetensorsIndex index = readSafetensorsIndex(indexPath);
  std::map<std::string, size_t> shards;
  for (const auto &[name, shard] : index.weightMap) {
    // parseSafetensorsIndex checked that `shard` is a plain file name.
    auto [it, fresh] = shards.emplace(shard, files_.size());
    if (fresh)
      files_.push_back(
          readSafetensorsHeader((fs::path(path_) / shard).string()));
    if (!files_[it->second].find(name))
      throw UserError(SourceLoc{indexPath},
                      "tensor '" + name + "' is mapped to shard '" + shard +
                          "', which does not hold it");
    fileOf_.emplace(name, it->second);
  }
}

void Checkpoint::openNpyFolder() {
  std::error_code ec;
  bool anyNpy = false;
  for (const fs::directory_entry &e : fs::directory_iterator(path_, ec))
    anyNpy = anyNpy || e.path().extension() == ".npy";
  if (!anyNpy)
    throw UserError(SourceLoc{path_},
                    std::string("a checkpoint folder holds ") +
                        kSafetensorsIndexName + " and its shards, " +
                        kSafetensorsFileName +
                        ", or NAME.npy files; this one holds none");
  npyFolder_ = true;
}

std::string Checkpoint::description() const {
  if (npyFolder_)
    return "folder of .npy files";
  const std::string tensors = std::to_string(fileOf_.size()) + " tensors";
  if (files_.size() == 1)
    return "safetensors file, " + tensors;
  return "safetensors folder: " + std::to_string(files_.size()) + " shards, " +
         tensors;
}

std::optional<Checkpoint::Tensor>
Checkpoint::find(const std::string &name) const {
  if (npyFolder_) {
    // Our own graph's names: never a separator, never a name from a file.
    SPYRE_ASSERT(!name.empty() && name.find('/') == std::string::npos &&
                     name.find("..") == std::string::npos,
                 "a weight name that is no plain file name: " + name);
    const std::string file = (fs::path(path_) / (name + ".npy")).string();
    std::error_code ec;
    if (!fs::exists(file, ec))
      return std::nullopt;
    return Tensor{file, std::nullopt};
  }
  const auto it = fileOf_.find(name);
  if (it == fileOf_.end())
    return std::nullopt;
  const SafetensorsHeader &h = files_[it->second];
  return Tensor{h.file, h.find(name)->shape};
}

std::vector<double>
Checkpoint::values(const std::string &name,
                   const std::vector<int64_t> &shape) const {
  const std::optional<Tensor> t = find(name);
  SPYRE_ASSERT(t.has_value(), "a tensor read that checkWeights did not find");
  if (!npyFolder_) {
    const SafetensorsHeader &h = files_[fileOf_.at(name)];
    const SafetensorsTensor &st = *h.find(name);
    SPYRE_ASSERT(st.shape == shape, "a tensor read at a shape not checked");
    return decode(st, readSafetensorsData(h, st));
  }
  const NpyArray a = readNpy(t->file);
  if (a.dtype != NpyDtype::F32 && a.dtype != NpyDtype::F16)
    throw UserError(SourceLoc{t->file},
                    "tensor '" + name +
                        "': a weight is float32 or float16, "
                        "got " +
                        npyDtypeName(a.dtype));
  if (a.shape != shape)
    throw UserError(SourceLoc{t->file},
                    "tensor '" + name + "': the config implies " +
                        shapeText(shape) + ", the file holds " +
                        shapeText(a.shape));
  return compiler::ref::tensorFromNpy(a).values;
}

std::optional<WeightName> checkpointNameOf(const std::string &input) {
  if (endsWith(input, ".weight.T"))
    return WeightName{input.substr(0, input.size() - 2), true};
  if (endsWith(input, ".weight"))
    return WeightName{input, false};
  return std::nullopt;
}

void checkWeights(const Checkpoint &checkpoint, const compiler::Graph &graph,
                  const LlmConfig &config) {
  std::string firstMissing;
  size_t missing = 0;
  for (const auto &[v, w] : weightsOf(graph)) {
    const std::vector<int64_t> expected = storedShape(w, v->type().shape);
    const std::optional<Checkpoint::Tensor> t = checkpoint.find(w.name);
    if (!t) {
      if (missing++ == 0)
        firstMissing = "tensor '" + w.name + "' " + shapeText(expected);
      continue;
    }
    if (t->shape && *t->shape != expected)
      throw UserError(SourceLoc{t->file},
                      "tensor '" + w.name + "': the config (" + config.file +
                          ") implies " + shapeText(expected) +
                          ", the checkpoint holds " + shapeText(*t->shape));
  }
  if (missing == 0)
    return;
  std::string message = firstMissing + " is not in the checkpoint (" +
                        checkpoint.description() + ")";
  if (missing > 1)
    message += "; " + std::to_string(missing - 1) + " more of the model's " +
               "weights are missing too";
  if (firstMissing.rfind("tensor 'lm_head.weight'", 0) == 0)
    message += "; the config's tie_word_embeddings is false, so the LM head "
               "is a tensor of its own";
  throw UserError(SourceLoc{checkpoint.path()}, message);
}

void loadWeights(const Checkpoint &checkpoint, const compiler::Graph &graph,
                 const LlmConfig &config, run::ModelInputs &inputs) {
  checkWeights(checkpoint, graph, config);
  for (const auto &[v, w] : weightsOf(graph)) {
    const TensorType &type = v->type();
    const std::vector<int64_t> stored = storedShape(w, type.shape);
    const std::vector<double> values = checkpoint.values(w.name, stored);
    NpyArray a;
    a.dtype = compiler::toNpyDtype(type.elementType);
    a.shape = type.shape;
    a.data.resize(static_cast<size_t>(type.byteSize()));
    const int64_t rows = w.transposed ? stored[0] : 1;
    const int64_t cols =
        static_cast<int64_t>(values.size()) / std::max<int64_t>(rows, 1);
    for (size_t i = 0; i < values.size(); ++i) {
      // Element i of the graph's [in, out] is element (o, in) of the
      // checkpoint's [out, in].
      const size_t from =
          w.transposed
              ? static_cast<size_t>((static_cast<int64_t>(i) % rows) * cols +
                                    static_cast<int64_t>(i) / rows)
              : i;
      const auto f = static_cast<float>(values[from]);
      double rounded = f;
      if (type.elementType == ElementType::F16) {
        const uint16_t h = half::floatToHalf(f);
        rounded = half::halfToFloat(h);
        std::memcpy(a.data.data() + 2 * i, &h, 2);
      } else {
        std::memcpy(a.data.data() + 4 * i, &f, 4);
      }
      if (!std::isfinite(rounded))
        throw UserError(
            SourceLoc{checkpoint.find(w.name)->file},
            "tensor '" + w.name + "': element " + std::to_string(from) + " (" +
                std::to_string(values[from]) + ") is not a finite " +
                (type.elementType == ElementType::F16 ? "float16" : "float32") +
                ", the graph's element type");
    }
    inputs.arrays[v->name()] = std::move(a);
  }
}

} // namespace spyre::llm
