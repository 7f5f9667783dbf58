// A model's real weights for its step graphs (docs/llm.md, "Real weights"):
// a checkpoint on disk, looked up by the names the graph gives its weight
// inputs.
//
// A checkpoint is one of
//   - a `.safetensors` file (support/Safetensors.h);
//   - a folder holding `model.safetensors.index.json` and the shards its
//     weight_map names (each name checked to be a plain file name of the
//     folder before a path is made of it);
//   - a folder holding `model.safetensors`;
//   - a folder of `NAME.npy` files, NAME the checkpoint's tensor name (the
//     path is made of the graph's name, never of a file's content).
// Opening one reads the headers only; a tensor's data is read when it is
// loaded.
//
// A graph input is a weight when its name ends in `.weight` (a norm, or the
// embedding table) or `.weight.T` (a matrix the graph holds transposed,
// [in, out], where the checkpoint holds PyTorch's [out, in]): its tensor is
// the name without `.T`, transposed once when it is loaded and converted to
// the graph's element type. Tied embeddings need nothing of their own: the
// graph then names the LM head `model.embed_tokens.weight.T`, the
// embedding table transposed, and a checkpoint's `lm_head.weight` is not
// read. Every other input (hidden states, token ids, rotary tables, the
// cache) is left as it was.
#pragma once

#include "compiler/ir/Graph.h"
#include "llm/LlmConfig.h"
#include "run/Inputs.h"
#include "support/Safetensors.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spyre::llm {

class Checkpoint {
public:
  /// Opens `path`, reading headers only; a UserError naming the path or the
  /// file at fault when it is none of the forms above or a header is bad.
  explicit Checkpoint(const std::string &path);

  const std::string &path() const { return path_; }
  /// `safetensors file, 9 tensors`, `safetensors folder: 2 shards, 21
  /// tensors`, `folder of .npy files`.
  std::string description() const;

  struct Tensor {
    std::string file; ///< the file holding it
    /// Its shape; nullopt for a .npy file, whose header is read with its
    /// data.
    std::optional<std::vector<int64_t>> shape;
  };
  /// The tensor called `name`, or nullopt.
  std::optional<Tensor> find(const std::string &name) const;
  /// The tensor's values as its file stores them (row-major, exact), of
  /// shape `shape` (a UserError naming the file and the tensor otherwise).
  std::vector<double> values(const std::string &name,
                             const std::vector<int64_t> &shape) const;

private:
  void openShards(const std::string &indexPath);
  void openNpyFolder();

  std::string path_;
  bool npyFolder_ = false;
  std::vector<SafetensorsHeader> files_;
  std::map<std::string, size_t> fileOf_; ///< tensor name -> files_ index
};

/// The checkpoint's name of the graph input `input` and whether the graph
/// holds it transposed; nullopt for an input that is no weight.
struct WeightName {
  std::string name;
  bool transposed = false;
};
std::optional<WeightName> checkpointNameOf(const std::string &input);

/// Checks, from the headers, that the checkpoint holds every weight input of
/// `graph` with the shape `config` implies: a UserError at the checkpoint
/// naming the first missing tensor (and how many more are missing), or the
/// tensor whose shape differs with the expected and the found shape.
void checkWeights(const Checkpoint &checkpoint, const compiler::Graph &graph,
                  const LlmConfig &config);

/// Sets each weight input's array in `inputs` to the checkpoint's tensor,
/// transposed where the graph's name ends in `.T` and rounded to the
/// graph's element type (a value that does not fit it is a UserError naming
/// the tensor); other inputs are left as they are. Checks as checkWeights.
void loadWeights(const Checkpoint &checkpoint, const compiler::Graph &graph,
                 const LlmConfig &config, run::ModelInputs &inputs);

} // namespace spyre::llm
