#include "run/Device.h"

#include <cmath>

#include "sim/core/Machine.h"
#include "sim/core/TensorIo.h"
#include "support/Diagnostic.h"

namespace spyre::run {

Device::Device(const hw::HwConfig &config, bool numerics)
    : config_(config), numerics_(numerics),
      memory_(static_cast<uint64_t>(config.memory.sizeBytes)) {}

uint64_t Device::reserve(uint64_t sticks, uint64_t alignSticks) {
  SPYRE_ASSERT(alignSticks >= 1, "alignment of zero sticks");
  const uint64_t address =
      (next_ + alignSticks - 1) / alignSticks * alignSticks;
  const uint64_t capacity =
      static_cast<uint64_t>(config_.memory.sizeBytes) / isa::kStickBytes;
  if (address > capacity || sticks > capacity - address)
    throw UserError(SourceLoc{"device"},
                    "device memory is full: " +
                        std::to_string((address + sticks) * isa::kStickBytes) +
                        " bytes kept between programs, the card has " +
                        std::to_string(config_.memory.sizeBytes));
  next_ = address + sticks;
  return address;
}

isa::TensorDecl Device::tensorAt(const std::string &name, isa::DType dtype,
                                 const std::vector<int64_t> &hostShape,
                                 uint64_t address) {
  isa::TensorDecl t;
  t.name = name;
  t.kind = isa::TensorKind::Input;
  t.dtype = dtype;
  t.hostShape = hostShape;
  t.deviceShape = isa::deviceShapeOf(hostShape, dtype);
  t.sizeSticks = isa::sticksOf(t.deviceShape);
  t.address = address;
  return t;
}

void Device::write(const isa::TensorDecl &tensor, const NpyArray &host) {
  if (numerics_)
    sim::writeTensor(tensor, host, tensor.name, memory_);
}

NpyArray Device::read(const isa::TensorDecl &tensor) const {
  return numerics_ ? sim::readTensor(tensor, memory_) : NpyArray{};
}

uint64_t Device::transferCycles(uint64_t bytes) const {
  return sim::hostOpTiming(config_, bytes, 0, 0).toHost;
}

uint64_t Device::launch() {
  const auto cycles = static_cast<uint64_t>(
      std::llround(config_.host.launchUs * config_.chip.clockGhz * 1e3));
  clock_ += cycles;
  return cycles;
}

uint64_t Device::transfer(uint64_t bytes) {
  const uint64_t cycles = transferCycles(bytes);
  clock_ += cycles;
  return cycles;
}

ProgramRun Device::run(const isa::Program &program) {
  sim::SimOptions options;
  options.numerics = numerics_;
  options.checks = true;
  sim::Machine machine(config_, program, options, nullptr, &memory_);
  machine.run();
  ProgramRun r;
  r.cycles = machine.totalCycles();
  r.readBytes = machine.deviceReadBytes();
  r.writeBytes = machine.deviceWriteBytes();
  r.macs = machine.macOps();
  r.hostOps = machine.hostRuns().size();
  for (const sim::Finding &f : machine.findings())
    r.findings.push_back(f.str());
  clock_ += r.cycles;
  return r;
}

} // namespace spyre::run
