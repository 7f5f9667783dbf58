// The inputs of a model run and the outputs it is expected to give: read from
// a folder (one NAME.npy per model input and expected_NAME.npy per output, or
// the ONNX test-data layout of input_N.pb and output_N.pb), or made from a
// seed with the generator of `spyre graph eval --seed` (compiler/ref/Random.h).
// Every file is checked against the model before anything runs: a missing,
// extra, misnamed, wrong-shape or wrong-dtype tensor is a UserError naming
// the file and the tensor.
#pragma once

#include "compiler/ir/Graph.h"
#include "support/Npy.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spyre::run {

enum class InputsKind {
  Npy,          ///< NAME.npy and expected_NAME.npy files
  OnnxTestData, ///< input_N.pb and output_N.pb (ONNX TensorProto) files
  Random,       ///< made from a seed
  Given,        ///< arrays handed over in memory (the Python package)
};

/// An output's expected values, as a file gave them.
struct ExpectedOutput {
  std::string file;
  std::vector<double> values; ///< row-major, exactly as stored
};

struct ModelInputs {
  InputsKind kind = InputsKind::Random;
  std::string dir;   ///< the folder they came from (empty for Random)
  uint64_t seed = 0; ///< Random only
  /// Per model input, by name: the host array, of a dtype the device takes
  /// for that input (float32 or float16 for f32 and f16 inputs, int8, int32).
  std::map<std::string, NpyArray> arrays;
  /// Per model input, by name: the file it came from (Random: none).
  std::map<std::string, std::string> files;
  /// Per model output that has an expected file, by output name.
  std::map<std::string, ExpectedOutput> expected;
};

/// The file names the folder layout gives a model's tensors: NAME.npy per
/// input (compiler::tensorFileName) and expected_NAME.npy per output.
std::string inputFileName(const std::string &input);
std::string expectedFileName(const std::string &output);

/// Reads the inputs folder `dir` for `graph`. The folder is ONNX test data
/// when it holds a `.pb` file; then input_N.pb is the graph's input N and
/// output_N.pb its output N (a tensor that carries a name must carry that
/// input's or output's). Any file that is not one of the model's tensors is
/// an error, so a misnamed file is not silently ignored, except with
/// `modelFolder` (the folder holds the model file itself): files that are
/// none of the model's tensors are then the model's own (the model, its
/// weights, its notes) and are skipped. A misnamed input is still a missing
/// one.
ModelInputs readInputsFolder(const compiler::Graph &graph,
                             const std::string &dir, bool modelFolder = false);

/// Inputs handed over as arrays, by input name, with the checks of the
/// folder reader: every model input present, no other name, each of the
/// model's shape and of a dtype the device takes for it. A UserError names
/// the tensor at `where` (as its key path).
ModelInputs givenInputs(const compiler::Graph &graph,
                        std::map<std::string, NpyArray> arrays,
                        const std::string &where);

/// Deterministic random inputs: compiler::ref::randomInput for each input.
ModelInputs randomInputs(const compiler::Graph &graph, uint64_t seed);

} // namespace spyre::run
