// The simulator check shared by the fuzz targets (SimCheck.h).
#include "SimCheck.h"

#include "sim/core/Machine.h"
#include "sim/output/RunOutput.h"
#include "sim/core/TensorIo.h"
#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <string>
#include <vector>

namespace spyre::fuzz {

namespace {

/// Inputs larger than this stay zero: filling them would cost more than
/// the run.
constexpr uint64_t kMaxFilledElements = 1 << 14;

struct RunResult {
  sim::Cycle cycles = 0;
  uint64_t instructions = 0;
  std::string findings;
};

void fillInputs(const isa::Program &program, sim::Machine &machine) {
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.kind != isa::TensorKind::Input)
      continue;
    uint64_t n = isa::elementCount(t.hostShape);
    if (n > kMaxFilledElements)
      continue;
    NpyArray host;
    host.shape = t.hostShape;
    if (t.dtype == isa::DType::Int8 || t.dtype == isa::DType::Int32) {
      host.dtype = t.dtype == isa::DType::Int8 ? NpyDtype::I8 : NpyDtype::I32;
      host.data.assign(n * static_cast<uint64_t>(npyDtypeSize(host.dtype)), 0);
      for (uint64_t i = 0; i < host.data.size(); ++i)
        host.data[i] = static_cast<char>(i * 37 % 101);
    } else {
      std::vector<float> v(n);
      for (uint64_t i = 0; i < n; ++i)
        v[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 8.0f;
      host = makeNpyF32(v, t.hostShape);
    }
    sim::writeTensor(t, host, t.name + ".npy", machine.deviceMemory());
  }
}

RunResult simulate(const hw::HwConfig &config, const isa::Program &program,
                   bool numerics) {
  sim::SimOptions options;
  options.numerics = numerics;
  options.maxCycles = 200000;
  options.maxInstructions = 20000;
  options.trace = true;
  sim::Machine machine(config, program, options);
  if (numerics)
    fillInputs(program, machine);
  machine.run();
  sim::statsJson(machine);
  sim::traceJson(machine);
  sim::summaryText(machine);
  if (numerics)
    for (const isa::TensorDecl &t : program.tensors)
      if (t.kind == isa::TensorKind::Output &&
          isa::elementCount(t.hostShape) <= kMaxFilledElements)
        sim::readTensor(t, machine.deviceMemory());
  RunResult r{machine.totalCycles(), machine.instructionsExecuted(), {}};
  for (const sim::Finding &f : machine.findings())
    r.findings += f.str() + "\n";
  return r;
}

} // namespace

void checkSimulation(const hw::HwConfig &config, const isa::Program &program) {
  RunResult timing = simulate(config, program, false);
  RunResult full = simulate(config, program, true);
  SPYRE_ASSERT(timing.cycles == full.cycles &&
                   timing.instructions == full.instructions &&
                   timing.findings == full.findings,
               "numerics changed the timing: timing only " +
                   std::to_string(timing.cycles) + " cycles, " +
                   std::to_string(timing.instructions) + " instructions\n" +
                   timing.findings + "with numerics " +
                   std::to_string(full.cycles) + " cycles, " +
                   std::to_string(full.instructions) + " instructions\n" +
                   full.findings);
}

} // namespace spyre::fuzz
