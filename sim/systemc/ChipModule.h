// The thin SystemC layer over the plain-C++ Machine: module names and
// hierarchy (chip, core_N, memory), one process that owns simulated time, and
// a TLM-2.0 loosely-timed socket at the device-memory boundary.
//
// The process advances the Machine one horizon at a time (the next event plus
// a quantum) and waits for the matching simulated time, so the kernel wakes
// far less often than once per instruction; results do not depend on the
// quantum because the Machine orders every event itself. DMA bursts reach the
// memory module through b_transport with the burst's start annotated as the
// delay; an external SystemC memory model can take its place on the socket.
#pragma once

#include "sim/core/Machine.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <memory>
#include <vector>

namespace spyre::sim {

/// The burst's description and timing answer, carried with the TLM payload.
struct DmaBurstExtension : tlm::tlm_extension<DmaBurstExtension> {
  Cycle start = 0;
  int core = 0;
  bool newRun = false;
  DmaRunTiming result;

  tlm::tlm_extension_base *clone() const override;
  void copy_from(const tlm::tlm_extension_base &other) override;
};

/// Device memory as a TLM-2.0 target: answers each burst from the shared
/// timing models (memory channel and data ring).
class MemoryModule : public sc_core::sc_module {
public:
  tlm_utils::simple_target_socket<MemoryModule> socket;

  MemoryModule(sc_core::sc_module_name name, ChipTiming &timing,
               sc_core::sc_time period);

private:
  void bTransport(tlm::tlm_generic_payload &payload, sc_core::sc_time &delay);
  ChipTiming &timing_;
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

class ChipModule : public sc_core::sc_module, public MemoryPort {
public:
  tlm_utils::simple_initiator_socket<ChipModule> memorySocket;

  /// `quantum` cycles: how far past the next event the Machine may run
  /// before the kernel advances time.
  ChipModule(sc_core::sc_module_name name, Machine &machine, ChipTiming &timing,
             Cycle quantum);

  /// MemoryPort: one b_transport per DMA burst.
  DmaRunTiming dmaBurst(Cycle t, int core, uint64_t addrBytes, uint64_t bytes,
                        Direction dir, bool newRun) override;

  const std::vector<std::unique_ptr<CoreModule>> &cores() const { return cores_; }

private:
  void run();

  Machine &machine_;
  sc_core::sc_time period_;
  Cycle quantum_;
  std::vector<std::unique_ptr<CoreModule>> cores_;
  MemoryModule memory_;
};

/// Builds the chip around `machine`, runs the SystemC kernel to the end and
/// finishes the machine. The kernel elaborates once per process, so this is
/// called at most once per process (one simulation per `spyre sim`).
void runWithSystemC(Machine &machine, Cycle quantum);

} // namespace spyre::sim
