// The ONNX backend node tests of Debian's libonnx-testdata, as the
// conformance tests read them: which tests the importer claims, and a test's
// model with the inputs the importer reads as static parameters frozen into
// initializers from the test's data (as a deployed model has them).
#pragma once

#include "onnx/onnx_pb.h"

#include <filesystem>
#include <string>
#include <vector>

namespace spyre::test {

/// Where libonnx-testdata puts the node tests.
inline constexpr const char *kOnnxNodeTests =
    "/usr/share/libonnx-testdata/data/node";

/// The node test folders (those with a model.onnx), sorted by name.
std::vector<std::filesystem::path> onnxNodeTestDirs();

/// Whether every use of graph input `name` is one the importer reads as a
/// static parameter (compiler::isOnnxStaticInput).
bool isStaticEverywhere(const onnx::GraphProto &graph, const std::string &name);

/// Whether the importer claims the test: every op supported, and every
/// input that stays an input a float tensor with a static shape.
bool claimsNodeTest(const onnx::ModelProto &model);

/// A node test's model with its static inputs frozen.
struct FrozenNodeTest {
  onnx::ModelProto model;
  /// Per input the model keeps, in order: the test's input_N.pb file.
  std::vector<std::filesystem::path> inputFiles;
  /// The test's output_N.pb files, in output order.
  std::vector<std::filesystem::path> outputFiles;
  std::string error; ///< a test data file that does not parse
};

/// Reads `dir`/model.onnx and test_data_set_0, and freezes the static inputs.
/// `claimed` is false (and nothing else is filled in) when the importer does
/// not claim the test.
FrozenNodeTest freezeNodeTest(const std::filesystem::path &dir, bool &claimed);

} // namespace spyre::test
