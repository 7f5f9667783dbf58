#include "sim/systemc/ChipModule.h"

#include "support/Diagnostic.h"

#include <string>

namespace spyre::sim {

using namespace sc_core;

tlm::tlm_extension_base *DmaBurstExtension::clone() const {
  auto *e = new DmaBurstExtension(*this); // owned by the TLM payload
  return e;
}

void DmaBurstExtension::copy_from(const tlm::tlm_extension_base &other) {
  *this = static_cast<const DmaBurstExtension &>(other);
}

MemoryModule::MemoryModule(sc_module_name name, ChipTiming &timing,
                           sc_time period)
    : sc_module(name), socket("socket"), timing_(timing), period_(period) {
  socket.register_b_transport(this, &MemoryModule::bTransport);
}

void MemoryModule::bTransport(tlm::tlm_generic_payload &payload, sc_time &delay) {
  DmaBurstExtension *ext = nullptr;
  payload.get_extension(ext);
  SPYRE_ASSERT(ext != nullptr, "DMA burst without its extension");
  Direction dir = payload.get_command() == tlm::TLM_WRITE_COMMAND
                      ? Direction::Write
                      : Direction::Read;
  ext->result = timing_.dmaBurst(ext->start, ext->core, payload.get_address(),
                                 payload.get_data_length(), dir, ext->newRun);
  // The annotated delay is when the burst completes, relative to now.
  Cycle now = static_cast<Cycle>(sc_time_stamp() / period_);
  delay = period_ * static_cast<double>(ext->result.done > now ? ext->result.done - now : 0);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

ChipModule::ChipModule(sc_module_name name, Machine &machine, ChipTiming &timing,
                       Cycle quantum)
    : sc_module(name), memorySocket("memory_socket"), machine_(machine),
      period_(sc_time(1.0 / machine.config().chip.clockGhz, SC_NS)),
      quantum_(quantum), memory_("memory", timing, period_) {
  for (int c = 0; c < machine.config().chip.cores; ++c)
    cores_.push_back(std::make_unique<CoreModule>(
        ("core_" + std::to_string(c)).c_str(), c));
  memorySocket.bind(memory_.socket);
  SC_HAS_PROCESS(ChipModule);
  SC_THREAD(run);
}

DmaRunTiming ChipModule::dmaBurst(Cycle t, int core, uint64_t addrBytes,
                                  uint64_t bytes, Direction dir, bool newRun) {
  tlm::tlm_generic_payload payload;
  DmaBurstExtension ext;
  ext.start = t;
  ext.core = core;
  ext.newRun = newRun;
  payload.set_command(dir == Direction::Write ? tlm::TLM_WRITE_COMMAND
                                              : tlm::TLM_READ_COMMAND);
  payload.set_address(addrBytes);
  payload.set_data_length(static_cast<unsigned>(bytes));
  payload.set_data_ptr(nullptr); // timing only: the Machine moves the data
  payload.set_streaming_width(static_cast<unsigned>(bytes));
  payload.set_extension(&ext);
  sc_time delay = SC_ZERO_TIME;
  memorySocket->b_transport(payload, delay);
  payload.clear_extension(&ext);
  return ext.result;
}

void ChipModule::run() {
  while (true) {
    std::optional<Cycle> next = machine_.nextEventTime();
    if (!next)
      break;
    sc_time target = period_ * static_cast<double>(*next);
    if (target > sc_time_stamp())
      wait(target - sc_time_stamp());
    machine_.runUntil(*next + quantum_);
  }
  // Returning leaves the kernel with nothing to do, so sc_start() returns;
  // sc_stop() would print an info message on every run.
  machine_.finish();
}

void runWithSystemC(Machine &machine, Cycle quantum) {
  // Picosecond resolution: the default, fine enough for any clock in GHz.
  ChipModule chip("chip", machine, machine.timing(), quantum);
  machine.setMemoryPort(&chip);
  sc_start();
  machine.setMemoryPort(nullptr);
  machine.finish();
}

} // namespace spyre::sim
