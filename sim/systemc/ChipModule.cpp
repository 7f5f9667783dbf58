#include "sim/systemc/ChipModule.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <string>

namespace spyre::sim {

using namespace sc_core;

namespace {

const char *commandText(tlm::tlm_command c) {
  switch (c) {
  case tlm::TLM_READ_COMMAND:
    return "read";
  case tlm::TLM_WRITE_COMMAND:
    return "write";
  default:
    return "ignore";
  }
}

std::string hexText(uint64_t v) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

} // namespace

tlm::tlm_extension_base *DmaBurstExtension::clone() const {
  auto *e = new DmaBurstExtension(*this); // owned by the TLM payload
  return e;
}

void DmaBurstExtension::copy_from(const tlm::tlm_extension_base &other) {
  *this = static_cast<const DmaBurstExtension &>(other);
}

// ------------------------------------------------------------ MemoryModule

MemoryModule::MemoryModule(sc_module_name name, ChipTiming &timing,
                           DeviceMemory &memory, sc_time period)
    : sc_module(name), socket("socket"), timing_(timing), memory_(memory),
      period_(period) {
  socket.register_b_transport(this, &MemoryModule::bTransport);
  socket.register_transport_dbg(this, &MemoryModule::transportDbg);
}

bool MemoryModule::moveData(tlm::tlm_generic_payload &payload) {
  const uint64_t addr = payload.get_address();
  const uint64_t n = payload.get_data_length();
  if (payload.get_byte_enable_ptr() != nullptr) {
    payload.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  if (payload.get_streaming_width() < n) {
    payload.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  if (addr > memory_.sizeBytes() || n > memory_.sizeBytes() - addr) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  if (payload.is_read())
    memory_.read(addr, payload.get_data_ptr(), n);
  else if (payload.is_write())
    memory_.write(addr, payload.get_data_ptr(), n);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
  return true;
}

void MemoryModule::bTransport(tlm::tlm_generic_payload &payload,
                              sc_time &delay) {
  if (!moveData(payload))
    return;
  DmaBurstExtension *ext = nullptr;
  payload.get_extension(ext);
  const Cycle now =
      static_cast<Cycle>(sc_time_stamp().value() / period_.value());
  const Cycle at =
      static_cast<Cycle>((sc_time_stamp() + delay).value() / period_.value());
  Cycle done = 0;
  if (ext != nullptr) {
    ext->result = timing_.dmaBurst(ext->start, ext->core, payload.get_address(),
                                   payload.get_data_length(), ext->direction,
                                   ext->newRun, payload.get_data_ptr());
    ext->answered = true;
    done = ext->result.done;
  } else {
    // Another initiator: the memory channel alone, from the annotated time.
    done = timing_.memory()
               .request(at, payload.get_data_length(),
                        payload.is_write() ? Direction::Write : Direction::Read)
               .dataDone;
  }
  // The annotated delay is when the burst completes, relative to now.
  delay = period_ * static_cast<double>(done > now ? done - now : 0);
}

unsigned MemoryModule::transportDbg(tlm::tlm_generic_payload &payload) {
  if (!moveData(payload) || payload.is_read() == payload.is_write())
    return 0;
  return payload.get_data_length();
}

// -------------------------------------------------------------- ChipModule

ChipModule::ChipModule(sc_module_name name, Machine &machine, Cycle quantum,
                       ChipMemory memory)
    : sc_module(name), memorySocket("memory_socket"), machine_(machine),
      period_(sc_time(1.0 / machine.config().chip.clockGhz, SC_NS)),
      quantum_(quantum), external_(memory == ChipMemory::External) {
  for (int c = 0; c < machine.config().chip.cores; ++c)
    cores_.push_back(
        std::make_unique<CoreModule>(("core_" + std::to_string(c)).c_str(), c));
  if (!external_) {
    memory_ = std::make_unique<MemoryModule>("memory", machine.timing(),
                                             machine.deviceMemory(), period_);
    memorySocket.bind(memory_->socket);
  } else if (!machine.program().hostOps.empty()) {
    throw UserError(SourceLoc{machine.program().name},
                    "the program has host ops, which read and write the "
                    "chip's own device memory; run it with the built-in "
                    "memory module");
  }
  payload_.set_extension(&ext_);
  SC_HAS_PROCESS(ChipModule);
  SC_THREAD(run);
}

ChipModule::~ChipModule() { payload_.clear_extension(&ext_); }

Cycle ChipModule::cyclesAt(const sc_time &t) const {
  const uint64_t p = period_.value();
  return static_cast<Cycle>((t.value() + p - 1) / p);
}

DmaRunTiming ChipModule::dmaBurst(Cycle t, int core, uint64_t addrBytes,
                                  uint64_t bytes, Direction dir, bool newRun,
                                  uint8_t *data) {
  const Cycle ready =
      t + (newRun ? machine_.timing().costs().dmaRunSetupCycles() : 0);
  ext_.start = t;
  ext_.core = core;
  ext_.newRun = newRun;
  ext_.direction = dir;
  ext_.answered = false;
  ext_.result = DmaRunTiming{};
  // Without numbers no bytes move: the command says so, and the data pointer
  // is a scratch buffer that the target must not touch.
  if (data == nullptr) {
    if (scratch_.size() < bytes)
      scratch_.resize(bytes);
    payload_.set_command(tlm::TLM_IGNORE_COMMAND);
    payload_.set_data_ptr(scratch_.data());
  } else {
    payload_.set_command(dir == Direction::Write ? tlm::TLM_WRITE_COMMAND
                                                 : tlm::TLM_READ_COMMAND);
    payload_.set_data_ptr(data);
  }
  payload_.set_address(addrBytes);
  payload_.set_data_length(static_cast<unsigned>(bytes));
  payload_.set_streaming_width(static_cast<unsigned>(bytes));
  payload_.set_byte_enable_ptr(nullptr);
  payload_.set_byte_enable_length(0);
  payload_.set_dmi_allowed(false);
  payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);

  // Annotated with the cycle the burst is ready, relative to now.
  const sc_time now = sc_time_stamp();
  const sc_time readyAt = period_ * static_cast<double>(ready);
  const sc_time sent = readyAt > now ? readyAt - now : SC_ZERO_TIME;
  sc_time delay = sent;
  memorySocket->b_transport(payload_, delay);
  if (payload_.is_response_error())
    throw UserError(SourceLoc{name()},
                    std::string("the memory target answered the ") +
                        commandText(payload_.get_command()) + " of " +
                        std::to_string(bytes) + " bytes at " +
                        hexText(addrBytes) + " for core " +
                        std::to_string(core) + " with " +
                        payload_.get_response_string());
  if (external_ && data != nullptr && dir == Direction::Write)
    for (uint64_t p = addrBytes / DeviceMemory::kPageBytes;
         p <= (addrBytes + bytes - 1) / DeviceMemory::kPageBytes; ++p)
      pagesWritten_.insert(p);

  // The returned delay counts from the time b_transport returns at (a
  // target may have waited).
  const Cycle returned = cyclesAt(sc_time_stamp() + delay);
  DmaRunTiming timing;
  if (ext_.answered) {
    timing = ext_.result;
  } else {
    const Cycle sentAt = cyclesAt(now + sent);
    const Cycle service = returned > sentAt ? returned - sentAt : 0;
    timing = timeDmaRunAroundMemory(machine_.timing().dataRing(), ready, core,
                                    bytes, dir, service);
  }
  // The annotated delay is honoured: the burst is done no earlier than the
  // target said.
  if (ext_.answered && returned > timing.done)
    timing.done = returned;
  return timing;
}

uint64_t ChipModule::debugTransport(tlm::tlm_command command, uint64_t addr,
                                    uint8_t *bytes, uint64_t n) {
  uint64_t done = 0;
  tlm::tlm_generic_payload p;
  while (done < n) {
    const auto chunk = static_cast<unsigned>(
        std::min<uint64_t>(n - done, DeviceMemory::kPageBytes));
    p.set_command(command);
    p.set_address(addr + done);
    p.set_data_ptr(bytes + done);
    p.set_data_length(chunk);
    p.set_streaming_width(chunk);
    p.set_byte_enable_ptr(nullptr);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const unsigned moved = memorySocket->transport_dbg(p);
    done += moved;
    if (moved < chunk)
      break;
  }
  return done;
}

uint64_t ChipModule::debugRead(uint64_t addr, void *dst, uint64_t n) {
  return debugTransport(tlm::TLM_READ_COMMAND, addr,
                        static_cast<uint8_t *>(dst), n);
}

uint64_t ChipModule::debugWrite(uint64_t addr, const void *src, uint64_t n) {
  // The payload's data pointer is not const; a write only reads through it.
  return debugTransport(
      tlm::TLM_WRITE_COMMAND, addr,
      const_cast<uint8_t *>(static_cast<const uint8_t *>(src)), n);
}

void ChipModule::run() {
  // An exception leaving a SystemC process turns into a report; kept here,
  // it reaches the caller of sc_start() as it was thrown.
  try {
    simulate();
  } catch (const UserError &e) {
    userError_ = e;
    error_ = std::current_exception();
  } catch (...) {
    error_ = std::current_exception();
  }
}

void ChipModule::throwIfFailed() const {
  if (error_)
    std::rethrow_exception(error_);
}

void ChipModule::simulate() {
  if (external_) {
    // The target starts from what the loader put in device memory.
    machine_.deviceMemory().forEachPage([&](uint64_t addr, const uint8_t *bytes,
                                            uint64_t n) {
      if (debugWrite(addr, bytes, n) != n)
        throw UserError(SourceLoc{name()},
                        "the memory target took fewer than " +
                            std::to_string(n) + " bytes at " + hexText(addr) +
                            " through transport_dbg; the chip loads "
                            "inputs and constants that way");
    });
  }
  while (true) {
    std::optional<Cycle> next = machine_.nextEventTime();
    if (!next)
      break;
    sc_time target = period_ * static_cast<double>(*next);
    if (target > sc_time_stamp())
      wait(target - sc_time_stamp());
    machine_.runUntil(*next + quantum_);
  }
  // Every page a burst wrote comes back into the machine's device memory.
  std::vector<uint8_t> page(DeviceMemory::kPageBytes);
  for (uint64_t p : pagesWritten_) {
    const uint64_t addr = p * DeviceMemory::kPageBytes;
    const uint64_t n = std::min<uint64_t>(
        DeviceMemory::kPageBytes, machine_.deviceMemory().sizeBytes() - addr);
    if (debugRead(addr, page.data(), n) != n)
      throw UserError(SourceLoc{name()},
                      "the memory target gave fewer than " + std::to_string(n) +
                          " bytes at " + hexText(addr) +
                          " through transport_dbg; the chip reads written "
                          "pages back that way");
    machine_.deviceMemory().write(addr, page.data(), n);
  }
  // Returning leaves the kernel with nothing to do, so sc_start() returns;
  // sc_stop() would print an info message on every run.
  machine_.finish();
}

void runWithSystemC(Machine &machine, Cycle quantum) {
  // Picosecond resolution: the default, fine enough for any clock in GHz.
  ChipModule chip("chip", machine, quantum);
  machine.setMemoryPort(&chip);
  sc_start();
  machine.setMemoryPort(nullptr);
  chip.throwIfFailed();
  machine.finish();
}

} // namespace spyre::sim
