// The run library: the comparison and its tolerance, the whole-run roofline
// and the summary's check lines against hand-computed values, the --shape
// parser, random inputs against `spyre graph eval --seed`, and a run in this
// process (the plain event loop) against the CLI's SystemC run.
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxTensor.h"
#include "run/RunModel.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace spyre::run {
namespace {

TEST(TensorCompare, CountsOutsideAndFindsTheWorst) {
  // atol 0.1 + rtol 0.5 * |expected|: allowed 0.6, 1.1, 0.1, 2.1.
  const Tolerance tol{0.1, 0.5};
  TensorComparison c =
      compareTensors({1.5, 3.0, 0.0, 6.0}, {1.0, 2.0, 0.25, 4.0}, tol);
  EXPECT_EQ(c.elements, 4u);
  EXPECT_EQ(c.outside, 1u); // only element 2: 0.25 > 0.1
  EXPECT_EQ(c.worst, 2u);
  EXPECT_DOUBLE_EQ(c.maxAbsDiff, 2.0);
  EXPECT_FALSE(c.ok());
}

TEST(TensorCompare, NanOnOneSideIsTheWorst) {
  TensorComparison c = compareTensors(
      {1.0, NAN, 100.0, NAN}, {1.0, 2.0, 0.0, NAN}, Tolerance{0.0, 0.0});
  EXPECT_EQ(c.outside, 2u); // the NaN against 2, and 100 against 0
  EXPECT_EQ(c.worst, 1u);
  EXPECT_DOUBLE_EQ(c.maxAbsDiff, 100.0);
}

TEST(TensorCompare, InfinitiesMatchOnlyThemselves) {
  // A huge tolerance must not let a number pass for an infinity, nor one
  // infinity for the other.
  const Tolerance wide{1e300, 1e300};
  EXPECT_FALSE(compareTensors({INFINITY}, {-INFINITY}, wide).ok());
  EXPECT_FALSE(compareTensors({5.0}, {INFINITY}, wide).ok());
  EXPECT_FALSE(compareTensors({INFINITY}, {5.0}, wide).ok());
  EXPECT_FALSE(compareTensors({NAN}, {INFINITY}, wide).ok());
  EXPECT_TRUE(compareTensors({INFINITY, -INFINITY}, {INFINITY, -INFINITY},
                             Tolerance{})
                  .ok());
}

TEST(TensorCompare, NanMatchesOnlyNan) {
  EXPECT_TRUE(compareTensors({NAN}, {-NAN}, Tolerance{}).ok());
  EXPECT_FALSE(compareTensors({NAN}, {0.0}, Tolerance{1e300, 1e300}).ok());
  EXPECT_FALSE(compareTensors({0.0}, {NAN}, Tolerance{1e300, 1e300}).ok());
}

TEST(TensorCompare, OverflowingDifferenceIsOutside) {
  // |1e308 - -1e308| overflows to infinity: outside any finite limit.
  TensorComparison c = compareTensors({1e308}, {-1e308}, Tolerance{1, 1});
  EXPECT_FALSE(c.ok());
  // A limit that overflows to infinity holds every finite value.
  EXPECT_TRUE(compareTensors({-1e308}, {1e308}, Tolerance{0, 1e300}).ok());
}

TEST(TensorCompare, ToleranceMustBeFiniteAndNonNegative) {
  EXPECT_EQ(toleranceProblem(0.0), "");
  EXPECT_EQ(toleranceProblem(1e300), "");
  EXPECT_NE(toleranceProblem(NAN), "");
  EXPECT_NE(toleranceProblem(INFINITY), "");
  EXPECT_NE(toleranceProblem(-1e-9), "");
}

TEST(OutputTolerance, HugeExpectedValuesKeepItFinite) {
  const Tolerance t = outputTolerance({1.7e308, 1.7e308, -1.7e308});
  EXPECT_TRUE(std::isfinite(t.atol));
  EXPECT_FALSE(compareTensors({0, 0, 0}, {1.7e308, 1.7e308, -1.7e308}, t).ok());
}

TEST(TensorCompare, FlatIndexText) {
  EXPECT_EQ(flatIndexText({7, 64}, 3 * 64 + 5), "[3, 5]");
  EXPECT_EQ(flatIndexText({2, 3, 4}, 23), "[1, 2, 3]");
  EXPECT_EQ(flatIndexText({}, 0), "[]");
}

TEST(RunCheck, ToleranceIsDepthEightDl16Roundings) {
  // mean |expected| over the finite values = (1 + 3 + 2) / 3 = 2;
  // 8 * 2^-8 = 1/32.
  Tolerance t = outputTolerance({1.0, -3.0, 2.0, INFINITY, NAN});
  EXPECT_DOUBLE_EQ(t.rtol, 1.0 / 32);
  EXPECT_DOUBLE_EQ(t.atol, 2.0 / 32);
  EXPECT_DOUBLE_EQ(t.allowed(-4.0), 6.0 / 32);
}

RunReport figures(uint64_t cycles, uint64_t macs, uint64_t read,
                  uint64_t write) {
  RunReport r;
  r.cycles = cycles;
  r.clockGhz = 1.5;
  r.macs = macs;
  r.readBytes = read;
  r.writeBytes = write;
  r.cores = 32;
  r.peakMacsPerCyclePerCore = 1024;
  r.memoryPeakGbps = 204.8;
  return r;
}

TEST(RunRoofline, MemoryBoundRun) {
  // 1500 cycles at 1.5 GHz = 1 us. 2e6 FLOP / 1e5 B = 20 FLOP/B; memory roof
  // 20 * 204.8 GB/s = 4.096 TFLOP/s, below the compute roof 2 * 1024 * 32 *
  // 1.5e9 = 98.304 TFLOP/s. Achieved 2e6 FLOP / 1 us = 2 TFLOP/s.
  RunReport r = figures(1500, 1000000, 60000, 40000);
  sim::Roofline roof = runRoofline(r);
  EXPECT_EQ(roof.regime, "memory-bound");
  EXPECT_DOUBLE_EQ(roof.intensity, 20.0);
  EXPECT_NEAR(roof.bound, 4.096, 1e-12);
  EXPECT_NEAR(roof.achieved, 2.0, 1e-12);
  EXPECT_NEAR(roof.fraction, 2.0 / 4.096, 1e-12);
  EXPECT_NEAR(r.achievedTflops(), 2.0, 1e-12);
  EXPECT_NEAR(r.achievedGbps(), 100.0, 1e-9); // 1e5 B in 1 us
}

TEST(RunRoofline, ComputeBoundAndMemoryOnlyRuns) {
  // 1e9 MACs over 1e6 bytes: 2000 FLOP/B, memory roof 409.6 TFLOP/s >
  // compute roof 98.304.
  sim::Roofline compute =
      runRoofline(figures(30000000, 1000000000, 1000000, 0));
  EXPECT_EQ(compute.regime, "compute-bound");
  EXPECT_NEAR(compute.bound, 98.304, 1e-9);
  // Without MACs: bandwidth against the memory peak; 3000 cycles = 2 us,
  // 204800 B / 2 us = 102.4 GB/s, half the peak.
  sim::Roofline memory = runRoofline(figures(3000, 0, 102400, 102400));
  EXPECT_EQ(memory.unit, "GB/s");
  EXPECT_NEAR(memory.achieved, 102.4, 1e-9);
  EXPECT_NEAR(memory.fraction, 0.5, 1e-12);
}

TEST(RunSummary, CheckLinesNameTheWorstElement) {
  RunReport r = figures(3000, 0, 102400, 102400);
  r.model = "m.json";
  r.modelName = "m";
  r.seed = 4;
  r.checked = true;
  OutputCheck ok;
  ok.output = "out";
  ok.shape = {2, 2};
  ok.tolerance = {0.5, 0.25};
  ok.result = compareTensors({1, 2, 3, 4}, {1, 2, 3, 4.25}, ok.tolerance);
  OutputCheck bad;
  bad.output = "y";
  bad.against = "in/expected_y.npy";
  bad.shape = {2, 3};
  bad.tolerance = {0.5, 0.25};
  bad.result =
      compareTensors({0, 0, 0, 0, 9, 0}, {0, 0, 0, 0, 2, 0}, bad.tolerance);
  bad.got = 9;
  bad.expected = 2;
  r.checks = {ok, bad};
  r.findings = {
      "cycle 5: uninitialised-read: core 0 pt.0 #1 (mm ...): example"};
  const std::string text = summaryText(r);
  EXPECT_NE(
      text.find(
          "inputs     random, seed 4\n"
          "cycles     3000 (2.000 us at 1.5 GHz)\n"
          "compute    0.000 TFLOP/s DL16 (0 MACs)\n"
          "memory     102.40 GB/s device memory (102400 bytes read, 102400 "
          "bytes written)\n"
          "roofline   memory-bound (no MACs): bound 204.8 GB/s, reached "
          "50.0%\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "check      MISMATCH in 1 of 2 outputs\n"
          "  out  ok: 4 elements against the host reference, max "
          "|difference| 0.25, tolerance 0.25 x (|expected| + 2)\n"
          "  y    MISMATCH: 1 of 6 elements outside the tolerance against "
          "in/expected_y.npy; worst at [1, 1]: got 9, expected 2, tolerance 1\n"
          "findings   1\n"
          "  cycle 5: uninitialised-read: core 0 pt.0 #1 (mm ...): example\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(r.exitCode(), 3);
  r.findings.clear();
  EXPECT_EQ(r.exitCode(), 3); // the mismatch alone
  r.checks.pop_back();
  EXPECT_EQ(r.exitCode(), 0);
}

TEST(RunOptions, ShapeOverrides) {
  auto [name, shape] = compiler::parseShapeOverride("in=put=3,64");
  EXPECT_EQ(name, "in=put");
  EXPECT_EQ(shape, (compiler::Shape{3, 64}));
  EXPECT_EQ(compiler::parseShapeOverride("s=").second, compiler::Shape{});
  EXPECT_THROW(compiler::parseShapeOverride("x=3,0"), UserError);
  EXPECT_THROW(compiler::parseShapeOverride("=3"), UserError);
  try {
    compiler::shapeOverrideOptions({"x=1", "x=2"});
    FAIL() << "no error for an input given twice";
  } catch (const UserError &e) {
    EXPECT_EQ(e.exitCode(), ExitCode::Usage);
    EXPECT_EQ(e.diagnostic().str(),
              "--shape: error: input 'x' is given more than once");
  }
}

TEST(RunInputs, RandomInputsAreThoseOfGraphEval) {
  const std::string dir = test::makeTempDir();
  const std::string model =
      test::srcPath("examples/models/gpt_block/model.json");
  test::ToolResult eval =
      test::runSpyre({"graph", "eval", model, "--seed", "9", "--outputs", dir});
  ASSERT_EQ(eval.exitCode, 0) << eval.err;
  compiler::Graph g = compiler::loadModelOrThrow(model, {});
  ModelInputs in = randomInputs(g, 9);
  ASSERT_EQ(in.arrays.size(), 1u);
  EXPECT_EQ(serializeNpy(in.arrays.at("x")), readFile(dir + "/x.npy", kTextFileLimit));
}

TEST(RunInputs, GivenInputsAreCheckedAsTheFolderIs) {
  compiler::Graph g = compiler::loadModelOrThrow(
      test::srcPath("examples/models/mlp_block/model.json"), {});
  const NpyArray good = randomInputs(g, 1).arrays.at("x");
  auto message = [&](std::map<std::string, NpyArray> arrays) {
    try {
      givenInputs(g, std::move(arrays), "Program.run");
    } catch (const UserError &e) {
      EXPECT_EQ(e.exitCode(), ExitCode::BadInput);
      return e.diagnostic().str();
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({}),
            "Program.run: error: at 'x': missing input 'x' (inputs: x)");
  EXPECT_EQ(message({{"x", good}, {"z", good}}),
            "Program.run: error: at 'z': names no input of the model "
            "(inputs: x)");
  NpyArray shape = good;
  shape.shape = {64, 7};
  EXPECT_EQ(message({{"x", shape}}),
            "Program.run: error: at 'x': input 'x' has shape [64, 7] but the "
            "model expects [7, 64]");
  NpyArray dtype = good;
  dtype.dtype = NpyDtype::I32;
  EXPECT_EQ(message({{"x", dtype}}),
            "Program.run: error: at 'x': input 'x' is int32 but the model's "
            "f32 input needs float32 or float16");

  const ModelInputs in = givenInputs(g, {{"x", good}}, "Program.run");
  EXPECT_EQ(in.kind, InputsKind::Given);
  EXPECT_EQ(serializeNpy(in.arrays.at("x")), serializeNpy(good));
}

TEST(RunModelInProcess, SameCyclesAndCheckAsTheCommand) {
  const std::string model = "examples/models/mlp_block/model.json";
  RunOptions o;
  o.model = test::srcPath(model);
  o.optLevel = 0;
  o.seed = 1;
  o.check = true;
  o.useSystemC = false;
  RunReport r = runModel(o);
  EXPECT_EQ(r.exitCode(), 0) << summaryText(r);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].output, "y");
  EXPECT_EQ(r.checks[0].result.elements, 7u * 64);
  EXPECT_GT(r.macs, 0u);
  // mlp_block: 7 x 64 x 128 MACs per linear, two linears.
  EXPECT_EQ(r.macs, 2u * 7 * 64 * 128);

  test::ToolResult cli =
      test::runSpyre({"run", model, "-O0", "--seed", "1", "--check"});
  ASSERT_EQ(cli.exitCode, 0) << cli.err;
  EXPECT_NE(cli.out.find("\ncycles     " + std::to_string(r.cycles) + " ("),
            std::string::npos)
      << cli.out << "\nin process: " << r.cycles;
}

TEST(RunModelInProcess, TurnedKeysAndAppendedOutputsComputeTheReference) {
  // Decode-shaped products read their transposed B as stored and turn it in
  // LX (4 rows, batched and not), and an output that is an input with a new
  // token joined after it is the program's append: the run gives the
  // model's output, past and new, which the check holds to the reference.
  // Other outputs whose declaration has another shape (a scalar's one
  // element) are read as they were.
  const std::string dir = test::makeTempDir();
  const std::string model = dir + "/decode.ir";
  writeFileAtomic(model, R"(graph @decode {
  input %q : f32[2, 4, 16]
  input %k : f32[2, 80, 16]
  input %x : f32[4, 64]
  input %w : f32[128, 64]
  input %past : f32[1, 2, 5, 16]
  input %n : f32[1, 2, 1, 16]
  const %c : f32[] = dense<[2.0]>
  %s = matmul @scores(%q, %k) {transpose_b = true} : f32[2, 4, 80]
  %y = matmul @proj(%x, %w) {transpose_b = true} : f32[4, 128]
  %new = relu @new(%n) : f32[1, 2, 1, 16]
  %present = concat @cat(%past, %new) {axis = 2} : f32[1, 2, 6, 16]
  %sq = mul @sq(%c, %c) : f32[]
  return %s, %y, %present, %sq
}
)");
  RunOptions o;
  o.model = model;
  o.seed = 3;
  o.check = true;
  o.useSystemC = false;
  o.outputs = dir + "/out";
  RunReport r = runModel(o);
  EXPECT_EQ(r.exitCode(), 0) << summaryText(r);
  // A scalar output, declared as one element, is no append.
  ASSERT_EQ(r.checks.size(), 4u);
  EXPECT_EQ(r.checks[3].output, "sq");
  EXPECT_EQ(r.checks[2].output, "present");
  EXPECT_EQ(r.checks[2].result.elements, 2u * 6 * 16);
  const NpyArray present = readNpy(dir + "/out/present.npy");
  EXPECT_EQ(present.shape, (std::vector<int64_t>{1, 2, 6, 16}));

  // The program turns both products' B and writes only the new token.
  DiagnosticEngine diags;
  std::optional<compiler::Graph> loaded = compiler::loadModel(model, {}, diags);
  ASSERT_TRUE(loaded) << diags.str();
  const compiler::CompileResult c =
      compileOrThrow(*loaded, hw::builtinConfig(), 2);
  EXPECT_EQ(c.graph->findValue("k")->name(),
            c.graph->findOp("scores")->operand(1)->name());
  EXPECT_EQ(c.graph->findOp("proj")->operand(1)->name(), "w");
  const isa::TensorDecl *out = c.program.findTensor("present");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->hostShape, (std::vector<int64_t>{1, 2, 1, 16}));
}

TEST(RunModelInProcess, PlainLoopWritesTheBytesOfTheSystemCRun) {
  // The command moves each DMA burst's bytes through the SystemC memory
  // socket; the plain event loop copies an instruction's whole region when
  // it starts. Both must leave the same device memory: the output files
  // agree byte for byte.
  for (const char *name :
       {"mlp_block/model.json", "gpt_block/model.json", "llama_block/model.onnx"}) {
    SCOPED_TRACE(name);
    const std::string model = "examples/models/" + std::string(name);
    const std::string plainDir = test::makeTempDir() + "/out";
    RunOptions o;
    o.model = test::srcPath(model);
    o.seed = 1;
    o.outputs = plainDir;
    o.useSystemC = false;
    RunReport r = runModel(o);
    ASSERT_EQ(r.exitCode(), 0) << summaryText(r);

    const std::string cliDir = test::makeTempDir() + "/out";
    test::ToolResult cli =
        test::runSpyre({"run", model, "--seed", "1", "--outputs", cliDir});
    ASSERT_EQ(cli.exitCode, 0) << cli.err;
    size_t files = 0;
    for (const auto &e : std::filesystem::directory_iterator(plainDir)) {
      const std::string file = e.path().filename().string();
      EXPECT_EQ(readFile(e.path().string(), kTextFileLimit),
                readFile(cliDir + "/" + file, kTextFileLimit))
          << file;
      ++files;
    }
    EXPECT_GT(files, 0u);
  }
}

TEST(RunModelInProcess, TimingOnlyReadsNoExternalWeights) {
  // The weights of external_data lie in weights/data.bin (2176 bytes); a
  // timing-only run times the same program without reading them, a run
  // with numbers reads them once and matches NumPy.
  const std::string dir = test::srcPath("tests/data/onnx/external_data");
  RunOptions o;
  o.model = dir + "/model.onnx";
  o.timingOnly = true;
  o.useSystemC = false;
  const uint64_t before = compiler::onnxExternalBytesRead();
  RunReport timed = runModel(o);
  EXPECT_EQ(compiler::onnxExternalBytesRead(), before);
  EXPECT_GT(timed.cycles, 0u);

  o.timingOnly = false;
  o.inputs = dir + "/inputs";
  o.check = true;
  RunReport checked = runModel(o);
  EXPECT_EQ(compiler::onnxExternalBytesRead(), before + 2176);
  EXPECT_EQ(checked.exitCode(), 0) << summaryText(checked);
  EXPECT_EQ(checked.cycles, timed.cycles);
}

} // namespace
} // namespace spyre::run
