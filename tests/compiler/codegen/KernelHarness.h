// Running generated programs in the kernel tests: deterministic inputs
// rounded to the device format (so a double-precision reference sees exactly
// what the device holds), a Machine run without SystemC, every output read
// back, every finding kept, and the checks every generated program must pass
// (it writes, reads and disassembles/reassembles to the same bytes).
#pragma once

#include "compiler/codegen/ProgramBuilder.h"
#include "sim/timing/Time.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace spyre::codegen::test {

/// n deterministic values uniform in [lo, hi], rounded to what `dtype`
/// stores (DL16 through the codec; FP32 unchanged).
std::vector<float> randomValues(size_t n, uint32_t seed, float lo, float hi,
                                isa::DType dtype);

/// A value rounded to DL16 and back.
float roundDl16(float v);

struct SimResult {
  sim::Cycle cycles = 0;
  uint64_t instructionsExecuted = 0;
  uint64_t macs = 0;
  uint64_t readBytes = 0;  ///< device memory
  uint64_t writeBytes = 0; ///< device memory
  /// Schedule findings, and any padding lane of a tensor left nonzero.
  std::vector<std::string> findings;
  /// Every input and output tensor after the run, in host order.
  std::map<std::string, std::vector<float>> outputs;
};

struct SimRequest {
  std::map<std::string, std::vector<float>> inputs;
  bool numerics = true;
  /// The chip the program was compiled for; null: the built-in config.
  const hw::HwConfig *config = nullptr;
};

/// Writes `inputs` into the program's input tensors (every input must be
/// given), runs the program, reads every input and output tensor back. An
/// INT32 tensor's values are integers held as floats, both ways.
SimResult simulate(const isa::Program &program, const SimRequest &request);

/// What is wrong with a generated program as a program file: empty when it
/// validates against `config`, survives writeProgram/readProgram,
/// and its disassembly assembles back to the same bytes.
std::string
programFileProblem(const isa::Program &program,
                   const hw::HwConfig &config = hw::builtinConfig());

/// Passes when |actual[i] - expected[i]| <= tol[i] for every element (and
/// the sizes agree); otherwise names the worst element.
::testing::AssertionResult allClose(const std::vector<float> &actual,
                                    const std::vector<double> &expected,
                                    const std::vector<double> &tol);

} // namespace spyre::codegen::test
