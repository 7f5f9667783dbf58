// The thin SystemC layer over the plain-C++ Machine: module names and
// hierarchy (chip, core_N, memory), one process that owns simulated time, and
// a loosely-timed TLM-2.0 socket at the device-memory boundary.
//
// The process advances the Machine one horizon at a time (the next event plus
// a quantum) and waits for the matching simulated time, so the kernel wakes
// far less often than once per instruction; results do not depend on the
// quantum because the Machine orders every event itself.
//
// Every DMA burst is one b_transport on `ChipModule::memorySocket`: a generic
// payload with the burst's device address, length, command and a pointer to
// its bytes in the core's LX, annotated with the cycle the burst is ready.
// The chip honours the delay the target returns. Spyre's description of the
// burst travels in a DmaBurstExtension that a plain memory target may
// ignore; the built-in MemoryModule answers it from the shared timing models
// (memory channel and data ring), which is what `spyre sim` runs. Any
// TLM-2.0 memory with a simple_target_socket can take the module's place
// (docs/simulator.md#systemc-boundary, examples/systemc/).
#pragma once

#include "sim/core/Machine.h"
#include "support/Diagnostic.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace spyre::sim {

/// Spyre's description of a DMA burst, attached to every payload the chip
/// sends. A target that times the burst itself fills `result` and sets
/// `answered`; a plain memory target leaves it alone.
struct DmaBurstExtension : tlm::tlm_extension<DmaBurstExtension> {
  Cycle start = 0;     ///< cycle the core's DMA engine issued the burst
  int core = 0;        ///< the core whose LX the bytes come from or go to
  bool newRun = false; ///< first burst of a contiguous run (pays run setup)
  /// Read: device memory to LX (a load); Write: LX to device memory (a
  /// store). Also set when the command is TLM_IGNORE_COMMAND (timing only).
  Direction direction = Direction::Read;
  bool answered = false; ///< set by a target that filled `result`
  DmaRunTiming result;   ///< the whole burst: memory channel and ring

  tlm::tlm_extension_base *clone() const override;
  void copy_from(const tlm::tlm_extension_base &other) override;
};

/// The chip's device memory as a TLM-2.0 target: moves the bytes of read
/// and write commands, answers a burst with a DmaBurstExtension from the
/// shared timing models (memory channel and data ring), and a payload without
/// it from the memory channel alone. transport_dbg reads and writes the
/// contents without time.
class MemoryModule : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<MemoryModule> socket;

  MemoryModule(sc_core::sc_module_name name, ChipTiming &timing,
               DeviceMemory &memory, sc_core::sc_time period);

private:
  void bTransport(tlm::tlm_generic_payload &payload, sc_core::sc_time &delay);
  unsigned transportDbg(tlm::tlm_generic_payload &payload);
  /// Copies the payload's bytes; false (with the response set) on a request
  /// this memory cannot serve.
  bool moveData(tlm::tlm_generic_payload &payload);
  ChipTiming &timing_;
  DeviceMemory &memory_;
  sc_core::sc_time period_;
};

/// One core: a named module that the statistics and traces refer to.
class CoreModule : public sc_core::sc_module {
public:
  CoreModule(sc_core::sc_module_name name, int id) : sc_module(name), id_(id) {}
  int id() const { return id_; }

private:
  int id_;
};

/// Which memory answers the chip's memory socket.
enum class ChipMemory {
  BuiltIn, ///< a MemoryModule named `memory` inside the chip, bound already
  External ///< the caller binds memorySocket to a target of its own
};

class ChipModule : public sc_core::sc_module, public MemoryPort {
public:
  tlm_utils::simple_initiator_socket<ChipModule> memorySocket;

  /// `quantum` cycles: how far past the next event the Machine may run
  /// before the kernel advances time. With ChipMemory::External the chip
  /// loads the machine's device memory (inputs, constants) into the target
  /// through transport_dbg when simulation starts, and reads every page a
  /// burst wrote back into it when the program ends, so outputs, statistics
  /// and host code read the machine's DeviceMemory as usual.
  ChipModule(sc_core::sc_module_name name, Machine &machine, Cycle quantum,
             ChipMemory memory = ChipMemory::BuiltIn);
  ~ChipModule() override;

  /// MemoryPort: one b_transport per DMA burst.
  DmaRunTiming dmaBurst(Cycle t, int core, uint64_t addrBytes, uint64_t bytes,
                        Direction dir, bool newRun, uint8_t *data) override;
  bool carriesData() const override { return true; }

  /// Reads `n` bytes of device memory at `addr` through the socket's debug
  /// transport (no time passes); the bytes the target returned.
  uint64_t debugRead(uint64_t addr, void *dst, uint64_t n);
  /// Writes them likewise.
  uint64_t debugWrite(uint64_t addr, const void *src, uint64_t n);

  /// Whole chip cycles from time zero to `t`, rounded up.
  Cycle cyclesAt(const sc_core::sc_time &t) const;
  sc_core::sc_time period() const { return period_; }

  const std::vector<std::unique_ptr<CoreModule>> &cores() const {
    return cores_;
  }

  /// Rethrows what stopped the chip's process, if anything did: call it
  /// after sc_start() returns.
  void throwIfFailed() const;
  /// The user error that stopped the chip's process, if one did, for a
  /// caller that reports it without throwing again (an exception thrown on
  /// the main stack after the kernel's coroutines ran is what
  /// AddressSanitizer misreads).
  const UserError *userError() const {
    return userError_ ? &*userError_ : nullptr;
  }

private:
  void run();
  void simulate();
  uint64_t debugTransport(tlm::tlm_command command, uint64_t addr,
                          uint8_t *bytes, uint64_t n);

  Machine &machine_;
  sc_core::sc_time period_;
  Cycle quantum_;
  bool external_;
  std::vector<std::unique_ptr<CoreModule>> cores_;
  std::unique_ptr<MemoryModule> memory_;
  tlm::tlm_generic_payload payload_;
  DmaBurstExtension ext_;
  std::vector<uint8_t> scratch_;    ///< the data of timing-only bursts
  std::set<uint64_t> pagesWritten_; ///< an external target's, to read back
  std::exception_ptr error_;
  std::optional<UserError> userError_;
};

/// Builds the chip around `machine` with the built-in memory, runs the
/// SystemC kernel to the end and finishes the machine. The kernel elaborates
/// once per process, so this is called at most once per process (one
/// simulation per `spyre sim`).
void runWithSystemC(Machine &machine, Cycle quantum);

} // namespace spyre::sim
