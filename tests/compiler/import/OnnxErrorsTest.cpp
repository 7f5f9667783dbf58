// Bad ONNX input through the CLI, as a user meets it: each bad model of
// tests/data/onnx/bad (scripts/gen_onnx_models.py) gives its exact first
// error line and exit code from `spyre graph check`, and so do bad shape
// overrides. Also the other graph commands on ONNX models.
#include "support/FileIO.h"
#include "support/Npy.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

namespace spyre {
namespace {

using spyre::test::firstLine;
using spyre::test::runSpyre;

const std::string kBad = "tests/data/onnx/bad/";

struct BadModel {
  const char *name;
  const char *error; ///< the first line of stderr, after the path
  /// A model the host fallback would run: an error of
  /// `spyre compile --no-fallback` instead of `spyre graph check`.
  bool noFallback = false;
};

const BadModel kBadModels[] = {
    {"empty", ": error: the file is empty; expected an ONNX model"},
    {"truncated",
     ": error: not an ONNX model: the file does not parse as an ONNX "
     "ModelProto (protobuf)"},
    {"random", ": error: not an ONNX model: the file does not parse as an ONNX "
               "ModelProto (protobuf)"},
    {"checker", ": error: at 'graph.node[0]': node 'act' (Relu): ONNX checker: "
                "Unrecognized attribute: alpha for operator Relu"},
    {"dynamic_dim",
     ": error: at 'graph.input[0]': input 'x': dimension 0 ('batch') "
     "is not static; give the input's shape with a shape override "
     "(--shape x=D0,D1,...)"},
    {"gather_rank3_table",
     ": error: at 'graph.node[0]': node 'gather' (Gather): only rows (axis "
     "0) of a rank-2 table are gathered on the device (an embedding "
     "lookup); this one gathers axis 0 of f32[5, 3, 4]; the host fallback "
     "cannot run it either: the indices 'ids' is not a constant; the host "
     "op needs it at compile time"},
    {"int_input_also_added",
     ": error: at 'graph.node[0]': node 'gather' (Gather): input 'ids' is a "
     "model input that has element type INT64; model inputs must be FLOAT "
     "or FLOAT16 (or integers read only as the indices of a Gather, an "
     "embedding lookup); the host fallback cannot run it either: the "
     "indices 'ids' is not a constant; the host op needs it at compile "
     "time"},
    {"unsupported_op",
     ": error: at 'graph.node[1]': node 'hswish' (HardSwish): op "
     "type 'HardSwish' is not supported (docs/onnx.md lists the "
     "supported ops)",
     true},
    {"wrong_opset",
     ": error: at 'opset_import[0]': opset 6 of the default ONNX "
     "domain is not supported (this importer reads opsets 7 to 27)"},
    {"opset_changed_op",
     ": error: at 'graph.node[0]': node 'resize' (Resize): opset 18 changed "
     "Resize (antialias, axes and keep_aspect_ratio_policy); this importer "
     "reads it only as opset 17 defines it"},
    {"opset_new_op",
     ": error: at 'graph.node[0]': node 'gelu' (Gelu): op type 'Gelu' is not "
     "defined in opset 17, the newest the ONNX library of this importer "
     "knows (the model has opset 20)"},
    {"opset_uneven_split",
     ": error: at 'graph.node[0]': node 'split' (Split): ONNX shape "
     "inference: The input is not evenly splittable (a Split of opset 18 by "
     "num_outputs must be even here: the importer reads Split as opset 17 "
     "defines it)"},
    {"opset_computed_axes",
     ": error: at 'graph.node[0]': node 'mean' (ReduceMean): opset 18 made "
     "the axes of ReduceMean an input; axes 'a' are not a constant of "
     "integers, which is not supported"},
    {"shape_mismatch",
     ": error: at 'graph.node[0]': node 'add' (Add): ONNX shape "
     "inference: Incompatible dimensions"},
    {"int_input",
     ": error: at 'graph.node[0]': node 'add' (Add): input 'x' is a "
     "model input that has element type INT32; model inputs must be "
     "FLOAT or FLOAT16 (or integers read only as the indices of a Gather, "
     "an embedding lookup)"},
    {"double_input",
     ": error: at 'graph.node[0]': node 'add' (Add): input 'x' is a "
     "model input that has element type DOUBLE; model inputs must be "
     "FLOAT or FLOAT16 (or integers read only as the indices of a Gather, "
     "an embedding lookup)"},
    {"pow_input_exponent",
     ": error: at 'graph.node[0]': node 'pow' (Pow): the exponent 'e' is not "
     "a constant; the device takes only a constant exponent with one element",
     true},
    {"tile_overflow",
     ": error: at 'graph.node[0]': node 'tile' (Tile): op type 'Tile' is "
     "not supported (docs/onnx.md lists the supported ops); the host "
     "fallback cannot run it either: the IR's host rejects it: Tile: repeats "
     "[4611686018427387905, 1] make dimension 0 overflow 64 bits"},
    {"pad_overflow",
     ": error: at 'graph.node[0]': node 'pad' (Pad): op type 'Pad' is not "
     "supported (docs/onnx.md lists the supported ops); the host fallback "
     "cannot run it either: the IR's host rejects it: Pad: pads [0, "
     "9223372036854775807, 0, 1] make dimension 1 overflow 64 bits"},
};

void PrintTo(const BadModel &m, std::ostream *os) { *os << m.name; }

class BadOnnxModel : public ::testing::TestWithParam<BadModel> {};

TEST_P(BadOnnxModel, CheckExitsOneWithItsError) {
  std::string path = kBad + GetParam().name + ".onnx";
  test::ToolResult r =
      GetParam().noFallback
          ? runSpyre({"compile", path, "-o", test::makeTempDir() + "/m.spyre",
                      "--no-fallback"})
          : runSpyre({"graph", "check", path});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(firstLine(r.err), path + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(Files, BadOnnxModel, ::testing::ValuesIn(kBadModels),
                         [](const ::testing::TestParamInfo<BadModel> &i) {
                           return std::string(i.param.name);
                         });

TEST(BadOnnxModel, EveryFileHasACase) {
  std::set<std::string> cases, files;
  for (const BadModel &m : kBadModels)
    cases.insert(std::string(m.name) + ".onnx");
  for (const auto &e : std::filesystem::directory_iterator(test::srcPath(kBad)))
    files.insert(e.path().filename().string());
  EXPECT_EQ(cases, files);
}

const std::string kDynamic = "tests/data/onnx/dynamic_batch/model.onnx";

TEST(OnnxCli, ShapeOverridesFixDynamicInputs) {
  test::ToolResult r =
      runSpyre({"graph", "check", kDynamic, "--shape", "x=3,2,4"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out,
            "dynamic_batch: 2 ops, 4 values (1 input, 1 constant), 1 output, "
            "160 parameter bytes\n");
}

struct BadShape {
  std::vector<std::string> args;
  int exitCode;
  std::string error;
};

TEST(OnnxCli, BadShapeOverridesAreNamed) {
  const BadShape cases[] = {
      {{"--shape", "x"},
       2,
       "--shape: error: 'x': no '=' (expected NAME=D0,D1,... with dimensions "
       "of at "
       "least 1)"},
      {{"--shape", "=3"},
       2,
       "--shape: error: '=3': the input name is empty (expected NAME=D0,D1,... "
       "with "
       "dimensions of at least 1)"},
      {{"--shape", "x=3,0,4"},
       2,
       "--shape: error: 'x=3,0,4': dimension '0' is not a positive integer "
       "(expected "
       "NAME=D0,D1,... with dimensions of at least 1)"},
      {{"--shape", "x=3,,4"},
       2,
       "--shape: error: 'x=3,,4': dimension '' is not a positive integer "
       "(expected "
       "NAME=D0,D1,... with dimensions of at least 1)"},
      {{"--shape", "x=3,2,4", "--shape", "x=3,2,4"},
       2,
       "--shape: error: input 'x' is given more than once"},
      {{"--shape", "y=3,2,4"},
       1,
       kDynamic +
           ": error: shape override y=[3, 2, 4]: the model has no input 'y' "
           "(its inputs: x)"},
      {{"--shape", "x=3,8"},
       1,
       kDynamic +
           ": error: at 'graph.input[0]': shape override x=[3, 8] has rank 2, "
           "input 'x' has rank 3"},
      {{"--shape", "x=3,2,5"},
       1,
       kDynamic +
           ": error: at 'graph.input[0]': shape override x=[3, 2, 5] gives "
           "dimension 2 as 5, the model says 4"},
  };
  for (const BadShape &c : cases) {
    std::vector<std::string> args{"graph", "check", kDynamic};
    args.insert(args.end(), c.args.begin(), c.args.end());
    test::ToolResult r = runSpyre(args);
    EXPECT_EQ(r.exitCode, c.exitCode) << c.error;
    EXPECT_EQ(firstLine(r.err), c.error);
  }
}

TEST(OnnxCli, UnknownExtensionsNameTheAcceptedKinds) {
  test::ToolResult r = runSpyre({"graph", "check", "model.tflite"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err,
            "model.tflite: error: unknown model file type '.tflite': give a "
            "graph JSON (.json), ONNX (.onnx) or textual IR (.ir) model\n");
}

TEST(OnnxCli, PrintAndEvalReadOnnx) {
  const std::string model = "tests/data/onnx/rmsnorm/model.onnx";
  test::ToolResult p = runSpyre({"graph", "print", model});
  EXPECT_EQ(p.exitCode, 0) << p.err;
  EXPECT_NE(p.out.find("%y = rmsnorm @rms_weight(%x, %weight)"),
            std::string::npos)
      << p.out;

  std::string out = test::makeTempDir();
  test::ToolResult e =
      runSpyre({"graph", "eval", model, "--inputs",
                "tests/data/onnx/rmsnorm/inputs", "--outputs", out});
  EXPECT_EQ(e.exitCode, 0) << e.err;
  EXPECT_EQ(e.out, "y: f32[2, 3, 8] -> " + out + "/y.npy\nw: f32[5, 8] -> " +
                       out + "/w.npy\n");
  std::vector<float> got = npyF32Values(readNpy(out + "/y.npy"), "y");
  std::vector<float> want = npyF32Values(
      readNpy(test::srcPath("tests/data/onnx/rmsnorm/expected/y.npy")),
      "expected");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::fabs(want[i])) << i;
}

} // namespace
} // namespace spyre
