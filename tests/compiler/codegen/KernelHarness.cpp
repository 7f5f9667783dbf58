// Running generated programs in the kernel tests (KernelHarness.h).
#include "KernelHarness.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "numerics/Dlf16.h"
#include "sim/core/Machine.h"
#include "sim/core/TensorIo.h"
#include "support/Npy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>

namespace spyre::codegen::test {

float roundDl16(float v) { return dlf16::toFloat(dlf16::fromFloat(v)); }

std::vector<float> randomValues(size_t n, uint32_t seed, float lo, float hi,
                                isa::DType dtype) {
  // mt19937 is specified bit for bit; the float is built from its integer
  // output so no library distribution (implementation-defined) is involved.
  std::mt19937 gen(seed);
  std::vector<float> v(n);
  for (float &x : v) {
    double u = static_cast<double>(gen()) / 4294967296.0;
    x = static_cast<float>(lo + (hi - lo) * u);
    if (dtype == isa::DType::Dl16)
      x = roundDl16(x);
  }
  return v;
}

namespace {

/// The host array of a tensor's values: FP32, or INT32 for an INT32 tensor
/// (its values are integers held as floats).
NpyArray hostArray(const std::vector<float> &values, const isa::TensorDecl &t) {
  if (t.dtype != isa::DType::Int32)
    return makeNpyF32(values, t.hostShape);
  NpyArray a;
  a.dtype = NpyDtype::I32;
  a.shape = t.hostShape;
  a.data.resize(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto v = static_cast<int32_t>(values[i]);
    std::memcpy(a.data.data() + i * 4, &v, 4);
  }
  return a;
}

std::vector<float> hostValues(const NpyArray &a) {
  if (a.dtype != NpyDtype::I32)
    return npyF32Values(a, "output");
  std::vector<float> v(a.data.size() / 4);
  for (size_t i = 0; i < v.size(); ++i) {
    int32_t x;
    std::memcpy(&x, a.data.data() + i * 4, 4);
    v[i] = static_cast<float>(x);
  }
  return v;
}

} // namespace

SimResult simulate(const isa::Program &program, const SimRequest &request) {
  sim::SimOptions opts;
  opts.numerics = request.numerics;
  sim::Machine m(request.config ? *request.config : hw::builtinConfig(),
                 program, opts);
  if (request.numerics)
    for (const isa::TensorDecl &t : program.tensors) {
      if (t.kind != isa::TensorKind::Input)
        continue;
      auto it = request.inputs.find(t.name);
      if (it == request.inputs.end())
        throw std::runtime_error("no values for input '" + t.name + "'");
      sim::writeTensor(t, hostArray(it->second, t), t.name, m.deviceMemory());
    }
  m.run();
  SimResult r;
  r.cycles = m.totalCycles();
  r.instructionsExecuted = m.instructionsExecuted();
  r.macs = m.macOps();
  r.readBytes = m.deviceReadBytes();
  r.writeBytes = m.deviceWriteBytes();
  for (const sim::Finding &f : m.findings())
    r.findings.push_back(f.str());
  if (!request.numerics)
    return r;
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.kind != isa::TensorKind::Output && t.kind != isa::TensorKind::Input)
      continue;
    r.outputs[t.name] = hostValues(sim::readTensor(t, m.deviceMemory()));
    // Padding lanes are zero in every tensor (docs/hardware.md#device-layout),
    // which reading the host elements alone would not show.
    const int64_t lanes = isa::lanesPerStick(t.dtype);
    const int64_t elemBytes = isa::kStickBytes / lanes;
    const int64_t cols = t.hostShape.back();
    const auto rows =
        static_cast<int64_t>(isa::elementCount(t.hostShape)) / cols;
    for (uint64_t st = 0; st < t.sizeSticks; ++st) {
      int64_t valid =
          std::min(lanes, cols - static_cast<int64_t>(st) / rows * lanes);
      std::array<uint8_t, isa::kStickBytes> bytes;
      m.deviceMemory().read((t.address + st) * isa::kStickBytes, bytes.data(),
                            bytes.size());
      for (int64_t b = valid * elemBytes; b < isa::kStickBytes; ++b)
        if (bytes[static_cast<size_t>(b)] != 0) {
          r.findings.push_back("padding of '" + t.name +
                               "' is not zero in stick " + std::to_string(st));
          break;
        }
    }
  }
  return r;
}

std::string programFileProblem(const isa::Program &program,
                               const hw::HwConfig &cfg) {
  if (std::string p = validateProgram(program, cfg); !p.empty())
    return p;
  std::string bytes = isa::writeProgram(program);
  isa::Program back = isa::readProgram(bytes, "generated.spyre");
  if (isa::writeProgram(back) != bytes)
    return "the program file does not read back to the same bytes";
  DiagnosticEngine diags;
  isa::Program again =
      isa::assemble(isa::disassemble(program), "generated.s", cfg, diags);
  if (diags.hasErrors())
    return "the disassembly does not assemble: " + diags.str();
  if (isa::writeProgram(again) != bytes)
    return "the disassembly assembles to different bytes";
  return "";
}

::testing::AssertionResult allClose(const std::vector<float> &actual,
                                    const std::vector<double> &expected,
                                    const std::vector<double> &tol) {
  if (actual.size() != expected.size() || tol.size() != expected.size())
    return ::testing::AssertionFailure()
           << actual.size() << " values, expected " << expected.size();
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double err = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    if (err <= tol[i])
      continue;
    double ratio = std::isnan(err) || tol[i] == 0 ? INFINITY : err / tol[i];
    if (ratio > worst) {
      worst = ratio;
      at = i;
    }
  }
  if (worst == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "element " << at << ": " << actual[at] << " vs expected "
         << expected[at] << " (tolerance " << tol[at] << ", off by " << worst
         << "x)";
}

} // namespace spyre::codegen::test
