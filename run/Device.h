// A persistent device: one simulated card whose device memory lives on
// between programs. Tensors that outlive a program (a model's weights, a
// key/value cache) are reserved once at fixed addresses and written once;
// each program is compiled with those addresses (compiler::Placement) and run
// against the same memory, after the one before it, so what a program writes
// into a reserved tensor is there for the next
// (docs/llm.md#the-persistent-device).
//
// The device keeps a clock: every program run and host transfer advances it
// by its cycles. Host transfers are timed as a host op's (sim::hostOpTiming:
// the PCIe link latency plus the bytes over its bandwidth, host.pcie_*).
// Programs run on the plain-C++ event loop (the SystemC kernel can only be
// elaborated once per process); the results are the same.
#pragma once

#include "compiler/driver/Compile.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/core/DeviceMemory.h"
#include "support/Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre::run {

/// What one program run did.
struct ProgramRun {
  uint64_t cycles = 0;
  uint64_t readBytes = 0; ///< device memory
  uint64_t writeBytes = 0;
  uint64_t macs = 0;
  size_t hostOps = 0;
  /// The schedule checks' findings (races, uninitialised reads, ...).
  std::vector<std::string> findings;
};

class Device {
public:
  /// `numerics`: false runs time programs only and keeps no data.
  Device(const hw::HwConfig &config, bool numerics);

  const hw::HwConfig &config() const { return config_; }
  bool numerics() const { return numerics_; }
  sim::DeviceMemory &memory() { return memory_; }
  const sim::DeviceMemory &memory() const { return memory_; }

  /// Reserves `sticks` of device memory kept between programs, at the next
  /// free address aligned to `alignSticks`; returns the address in sticks.
  /// A UserError when the card's memory is full.
  uint64_t reserve(uint64_t sticks, uint64_t alignSticks = 1);
  /// The first address above every reservation: where a program's own
  /// tensors go (compiler::Placement::firstFree).
  uint64_t firstFree() const { return next_; }

  /// A tensor of `hostShape` in the default layout at `address`, as a
  /// program declares it.
  static isa::TensorDecl tensorAt(const std::string &name, isa::DType dtype,
                                  const std::vector<int64_t> &hostShape,
                                  uint64_t address);
  /// Writes `host` into `tensor`'s sticks (numerics only).
  void write(const isa::TensorDecl &tensor, const NpyArray &host);
  /// Reads `tensor` back (FP32 for DL16), or an empty array without numerics.
  NpyArray read(const isa::TensorDecl &tensor) const;

  /// Cycles of one host transfer of `bytes` either way over PCIe.
  uint64_t transferCycles(uint64_t bytes) const;
  /// Advances the clock by a transfer of `bytes`; returns its cycles.
  uint64_t transfer(uint64_t bytes);

  /// Advances the clock by starting one program from the host
  /// (host.launch_us, docs/hardware.md); returns its cycles.
  uint64_t launch();

  /// Runs `program` (compiled with this device's placement) against the
  /// memory: its inputs must have been written, reserved or not; what it
  /// writes stays. Advances the clock by its cycles.
  ProgramRun run(const isa::Program &program);

  /// Cycles since the device was made: programs, launches and transfers.
  uint64_t clock() const { return clock_; }

private:
  hw::HwConfig config_;
  bool numerics_;
  sim::DeviceMemory memory_;
  uint64_t next_ = 0;
  uint64_t clock_ = 0;
};

} // namespace spyre::run
