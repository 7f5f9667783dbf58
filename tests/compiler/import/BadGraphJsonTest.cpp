// Every kind of bad graph JSON gives one clear error naming the JSON path
// (or the line and column, for text that is not JSON). One file per case in
// tests/compiler/import/bad/.
#include "compiler/import/GraphJson.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace spyre::compiler {
namespace {

struct BadCase {
  const char *name;
  const char *error; ///< the first line of the diagnostic
};

const BadCase kCases[] = {
    {"syntax", "syntax.json:5:1: error: invalid JSON: syntax error while parsing "
               "object key - unexpected '}'; expected string literal"},
    {"not_object", "not_object.json: error: expected an object, got array"},
    {"wrong_format", "wrong_format.json: error: at 'format': not a graph JSON file: "
                     "format is 'onnx', expected 'spyre-graph'"},
    {"bad_version", "bad_version.json: error: at 'version': unsupported version 2 "
                    "(this build reads version 1)"},
    {"missing_field", "missing_field.json: error: missing field 'ops'"},
    {"unknown_field", "unknown_field.json: error: at 'opps': unknown field 'opps' "
                      "(expected format, version, name, inputs, outputs, constants, "
                      "ops)"},
    {"bad_dtype", "bad_dtype.json: error: at 'inputs[0].dtype': unknown dtype "
                  "'float32' (expected f32, f16, i8 or i32)"},
    {"bad_shape", "bad_shape.json: error: at 'inputs[0].shape[1]': dimension 0 must "
                  "be at least 1"},
    {"shape_not_int", "shape_not_int.json: error: at 'inputs[0].shape[1]': expected "
                      "an integer, got number 2.5"},
    {"empty_name", "empty_name.json: error: at 'inputs[0].name': a name must not be "
                   "empty"},
    {"duplicate_tensor", "duplicate_tensor.json: error: at 'ops[0].outputs[0]': "
                         "tensor 'x' is already defined at 'inputs[0].name'"},
    {"duplicate_op", "duplicate_op.json: error: at 'ops[1].name': op 'r' is already "
                     "defined at 'ops[0].name'"},
    {"duplicate_key", "duplicate_key.json: error: at 'ops[0]': key 'attrs' is given "
                      "twice"},
    {"dangling", "dangling.json: error: at 'ops[1].inputs[1]': unknown tensor 'foo' "
                 "(not an input, a constant or an op output)"},
    {"cycle", "cycle.json: error: at 'ops[1]': ops form a cycle: 'second' uses 'c' "
              "from 'third', 'third' uses 'b' from 'second'"},
    {"unknown_op", "unknown_op.json: error: at 'ops[0].op': unknown op 'conv2d' (see "
                   "docs/ir.md for the ops)"},
    {"wrong_attr_type", "wrong_attr_type.json: error: at 'ops[0].attrs.axis': op 'sm' "
                        "(softmax): attribute 'axis' must be an int, got string \"1\""},
    {"unknown_attr", "unknown_attr.json: error: at 'ops[0].attrs.dim': op 'sm' "
                     "(softmax): unknown attribute 'dim' (softmax takes axis)"},
    {"missing_attr", "missing_attr.json: error: at 'ops[0]': op 't' (transpose): "
                     "missing attribute 'perm' (int list)"},
    {"bad_attr_value", "bad_attr_value.json: error: at 'ops[0].attrs.approximate': op "
                       "'act' (gelu): attribute 'approximate' must be 'none' or "
                       "'tanh', got \"fast\""},
    {"negative_epsilon", "negative_epsilon.json: error: at 'ops[0].attrs.epsilon': op "
                         "'ln' (layernorm): epsilon must be finite and not negative, "
                         "got -0.001"},
    {"shape_mismatch", "shape_mismatch.json: error: at 'ops[0].inputs[1]': op 'fc' "
                       "(linear): weight f32[32, 48] has 48 input features, x f32[7, "
                       "64] has 64"},
    {"mixed_types", "mixed_types.json: error: at 'ops[0].inputs[1]': op 's' (add): b "
                    "f16[3] has a different element type from a f32[3]"},
    {"operand_count", "operand_count.json: error: at 'ops[0].inputs': op 's' (add): "
                      "expects 2 operands, as add(a, b), got 1"},
    {"output_count", "output_count.json: error: at 'ops[0].outputs': op 's' (split): "
                     "split gives 3 results, 2 output names are given"},
    {"missing_constant_file",
     "missing_constant_file.json: error: at 'constants[0].file': cannot read constant "
     "file 'no_such_file.npy': cannot open file: No such file or directory"},
    {"constant_wrong_shape", "constant_wrong_shape.json: error: at "
                             "'constants[0].file': 'w_32x48.npy' has shape [32, 48], "
                             "the constant is declared [48, 32]"},
    {"constant_wrong_dtype", "constant_wrong_dtype.json: error: at "
                             "'constants[0].file': 'i32_3.npy' holds i32 data, the "
                             "constant is declared f32"},
    {"constant_bad_npy", "constant_bad_npy.json: error: at 'constants[0].file': cannot "
                         "read constant file 'f64_3.npy': invalid .npy file: "
                         "unsupported dtype '<f8' (supported: float32, float16, int8, int32, "
                         "and int64 whose values fit in int32)"},
    {"inline_count", "inline_count.json: error: at 'constants[0].data': expected a "
                     "flat list of 4 numbers for f32[2, 2], got 3"},
    {"inline_range", "inline_range.json: error: at 'constants[0].data[1]': 300 is out "
                     "of range for i8"},
    {"file_and_data", "file_and_data.json: error: at 'constants[0]': give either "
                      "'file' or 'data', not both"},
    {"unknown_output", "unknown_output.json: error: at 'outputs[1]': unknown tensor "
                       "'y'"},
    {"no_outputs", "no_outputs.json: error: at 'outputs': a graph needs at least one "
                   "output"},
    {"constant_file_outside", "constant_file_outside.json: error: at "
                              "'constants[0].file': '../bad/f32_3.npy' leaves "
                              "the model's folder ('..'); a constant file "
                              "lies inside it"},
    {"constant_file_absolute", "constant_file_absolute.json: error: at "
                               "'constants[0].file': '/dev/zero' is an absolute "
                               "path; a constant file is named relative to the "
                               "model's folder, inside it"},
};

void PrintTo(const BadCase &c, std::ostream *os) { *os << c.name; }

class BadGraphJson : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadGraphJson, ReportsItsErrorWithThePath) {
  std::string dir = spyre::test::srcPath("tests/compiler/import/bad/");
  std::string file = std::string(GetParam().name) + ".json";
  DiagnosticEngine diags;
  EXPECT_EQ(loadGraphJson(dir + file, diags), nullptr);
  ASSERT_EQ(diags.errorCount(), 1u) << diags.str();
  std::string shown = diags.diagnostics().front().str();
  ASSERT_EQ(shown.rfind(dir, 0), 0u) << shown;
  shown = shown.substr(dir.size());
  EXPECT_EQ(shown.substr(0, shown.find('\n')), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(Files, BadGraphJson, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BadCase> &i) {
                           return std::string(i.param.name);
                         });

TEST(BadGraphJson, EveryFileHasACase) {
  std::set<std::string> cases;
  for (const BadCase &c : kCases)
    cases.insert(std::string(c.name) + ".json");
  for (const auto &e : std::filesystem::directory_iterator(
           spyre::test::srcPath("tests/compiler/import/bad")))
    if (e.path().extension() == ".json") {
      EXPECT_TRUE(cases.contains(e.path().filename().string())) << e.path();
    }
}

TEST(BadGraphJson, SyntaxErrorsShowTheLineAndACaret) {
  DiagnosticEngine diags;
  EXPECT_EQ(parseGraphJson("{\n  \"format\": \"spyre-graph\",\n  \"version\": 1 2\n}\n",
                           "m.json", "", diags),
            nullptr);
  EXPECT_EQ(diags.diagnostics().front().str(),
            "m.json:3:16: error: invalid JSON: syntax error while parsing object - "
            "unexpected number literal; expected '}'\n"
            "  \"version\": 1 2\n"
            "               ^");
}

TEST(BadGraphJson, DeeplyNestedAttributesAreAnErrorNotACrash) {
  auto load = [](size_t levels) {
    std::string deep = std::string(levels, '[') + std::string(levels, ']');
    DiagnosticEngine diags;
    EXPECT_EQ(parseGraphJson(R"({"format": "spyre-graph", "version": 1, "name": "g",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}], "outputs": ["y"],
      "ops": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"],
               "attrs": {"deep": )" + deep + "}}]}",
                             "m.json", "", diags),
              nullptr);
    EXPECT_TRUE(diags.hasErrors());
    return diags.hasErrors() ? diags.diagnostics().front().str() : "";
  };
  // Deeper than any JSON `spyre` reads: refused before parsing, at the
  // bracket one level too deep (support/Nesting.h).
  EXPECT_EQ(load(100000),
            "m.json:4:230: error: JSON nests deeper than 200 levels of arrays "
            "and objects here; at most 200 are accepted");
  // Parsed, but deeper than an attribute may be: named by its key path.
  std::string shown = load(100);
  EXPECT_EQ(shown.rfind("m.json: error: at 'ops[0].attrs.deep[0][0]", 0), 0u) << shown;
  EXPECT_NE(shown.find("': attributes nest deeper than 64 levels"), std::string::npos);
}

TEST(BadGraphJson, AMissingModelFileIsAnError) {
  DiagnosticEngine diags;
  EXPECT_EQ(loadGraphJson("/no/such/model.json", diags), nullptr);
  EXPECT_EQ(diags.diagnostics().front().str(),
            "/no/such/model.json: error: cannot open file: No such file or directory");
  EXPECT_THROW(loadGraphJsonOrThrow("/no/such/model.json"), UserError);
}

// Found by the graph_json fuzz target: nlohmann throws out_of_range for a
// number no JSON number type holds; it must be a user error, not a crash.
TEST(BadGraphJson, NumberTooLargeIsAnError) {
  DiagnosticEngine diags;
  EXPECT_EQ(parseGraphJson(R"({"format": "spyre-graph", "version": 1e405})",
                           "m.json", "", diags),
            nullptr);
  ASSERT_TRUE(diags.hasErrors());
  std::string shown = diags.diagnostics().front().str();
  EXPECT_EQ(shown.rfind("m.json: error: invalid JSON: number overflow", 0), 0u)
      << shown;
}

} // namespace
} // namespace spyre::compiler
