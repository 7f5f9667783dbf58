// A SystemC top level that puts the Spyre chip next to a memory module of
// its own: SimpleMemory below is a plain TLM-2.0 memory (sparse pages, one
// fixed latency per transaction) that knows nothing about Spyre. It serves
// every DMA burst of the program, bytes and time, in place of the chip's
// built-in memory model.
//
//   spyre-systemc-example PROGRAM.spyre [--memory simple|builtin]
//       [--latency-ns N] [--memory-bytes N] [--config FILE] [--inputs DIR]
//       [--outputs DIR]
//       [--stats FILE] [--trace FILE] [--timing-only] [--peek TENSOR FILE.npy]
//
// It prints what `spyre sim` prints, then the memory's own count of
// transactions. --peek reads a tensor out of the memory module after the
// run through debug transport (transport_dbg), as a debugger would.
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/core/Machine.h"
#include "sim/core/TensorIo.h"
#include "sim/output/RunOutput.h"
#include "sim/systemc/ChipModule.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/Gzip.h"
#include "support/Npy.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <charconv>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace sc_core;

/// A plain loosely-timed memory: bytes in 64 KiB pages allocated on first
/// write (untouched bytes read as zero), `latency` added to the annotated
/// delay of every b_transport, transport_dbg for inspection. It ignores any
/// extension on the payload.
class SimpleMemory : public sc_module {
public:
  tlm_utils::simple_target_socket<SimpleMemory> socket;

  SimpleMemory(sc_module_name name, uint64_t sizeBytes, sc_time latency)
      : sc_module(name), socket("socket"), size_(sizeBytes), latency_(latency) {
    socket.register_b_transport(this, &SimpleMemory::bTransport);
    socket.register_transport_dbg(this, &SimpleMemory::transportDbg);
  }

  uint64_t transactions() const { return transactions_; }

private:
  static constexpr uint64_t kPage = 64 * 1024;

  bool access(tlm::tlm_generic_payload &p) {
    const uint64_t addr = p.get_address(), n = p.get_data_length();
    if (p.get_byte_enable_ptr() != nullptr || p.get_streaming_width() < n) {
      p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return false;
    }
    if (addr > size_ || n > size_ - addr) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return false;
    }
    unsigned char *data = p.get_data_ptr();
    for (uint64_t done = 0; done < n;) {
      const uint64_t at = addr + done;
      const uint64_t chunk = std::min(n - done, kPage - at % kPage);
      if (p.is_write()) {
        std::vector<unsigned char> &page = pages_[at / kPage];
        page.resize(kPage);
        std::memcpy(page.data() + at % kPage, data + done, chunk);
      } else if (p.is_read()) {
        auto it = pages_.find(at / kPage);
        if (it == pages_.end())
          std::memset(data + done, 0, chunk);
        else
          std::memcpy(data + done, it->second.data() + at % kPage, chunk);
      }
      done += chunk;
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return true;
  }

  void bTransport(tlm::tlm_generic_payload &p, sc_time &delay) {
    ++transactions_;
    if (access(p))
      delay += latency_;
  }

  /// The bytes moved: none for an ignore command.
  unsigned transportDbg(tlm::tlm_generic_payload &p) {
    if (!access(p) || p.is_read() == p.is_write())
      return 0;
    return p.get_data_length();
  }

  uint64_t size_;
  sc_time latency_;
  uint64_t transactions_ = 0;
  std::map<uint64_t, std::vector<unsigned char>> pages_;
};

struct Options {
  std::string program, config, inputs, outputs, stats, trace;
  std::string memory = "simple";
  uint64_t latencyNs = 100;
  uint64_t memoryBytes = 0; ///< 0: as large as the config's device memory
  bool timingOnly = false;
  std::string peekTensor, peekFile;
};

[[noreturn]] void usage(const std::string &message) {
  throw spyre::UserError(spyre::SourceLoc{"spyre-systemc-example"}, message,
                         spyre::ExitCode::Usage);
}

Options parse(int argc, char **argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  auto value = [&](size_t &i) -> const std::string & {
    if (i + 1 >= args.size())
      usage(args[i] + " needs a value");
    return args[++i];
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--memory") {
      o.memory = value(i);
      if (o.memory != "simple" && o.memory != "builtin")
        usage("--memory is 'simple' or 'builtin', not '" + o.memory + "'");
    } else if (a == "--latency-ns") {
      const std::string &v = value(i);
      auto [end, ec] =
          std::from_chars(v.data(), v.data() + v.size(), o.latencyNs);
      // One second per burst is far past any memory; it also keeps the
      // picosecond delay far from overflow.
      if (ec != std::errc() || end != v.data() + v.size() ||
          o.latencyNs > 1000000000)
        usage(
            "--latency-ns takes whole nanoseconds from 0 to 1000000000, not '" +
            v + "'");
    } else if (a == "--memory-bytes") {
      const std::string &v = value(i);
      auto [end, ec] =
          std::from_chars(v.data(), v.data() + v.size(), o.memoryBytes);
      if (ec != std::errc() || end != v.data() + v.size() || o.memoryBytes == 0)
        usage("--memory-bytes takes a whole number of bytes above 0, not '" +
              v + "'");
    } else if (a == "--config") {
      o.config = value(i);
    } else if (a == "--inputs") {
      o.inputs = value(i);
    } else if (a == "--outputs") {
      o.outputs = value(i);
    } else if (a == "--stats") {
      o.stats = value(i);
    } else if (a == "--trace") {
      o.trace = value(i);
    } else if (a == "--timing-only") {
      o.timingOnly = true;
    } else if (a == "--peek") {
      o.peekTensor = value(i);
      o.peekFile = value(i);
    } else if (!a.empty() && a[0] == '-') {
      usage("unknown option '" + a + "'");
    } else if (o.program.empty()) {
      o.program = a;
    } else {
      usage("one program file, not '" + o.program + "' and '" + a + "'");
    }
  }
  if (o.program.empty())
    usage(
        "usage: spyre-systemc-example PROGRAM.spyre [--memory simple|builtin] "
        "[--latency-ns N] [--memory-bytes N] [--config FILE] [--inputs DIR] "
        "[--outputs DIR] "
        "[--stats FILE] [--trace FILE] [--timing-only] [--peek TENSOR "
        "FILE.npy]");
  if (o.timingOnly && (!o.outputs.empty() || !o.peekTensor.empty()))
    usage("--timing-only moves no bytes: no --outputs or --peek");
  return o;
}

int simulate(const Options &o) {
  using namespace spyre;
  const hw::HwConfig config = hw::loadConfigOrDefault(o.config);
  const isa::Program program =
      isa::readProgram(readFile(o.program, kProgramFileLimit), o.program);
  if (program.configFingerprint != config.fingerprint())
    throw UserError(SourceLoc{o.program},
                    "compiled for another config; pass it with --config");
  if (std::string misfit = isa::checkProgramFits(program, config);
      !misfit.empty())
    throw UserError(SourceLoc{o.program}, misfit);
  const isa::TensorDecl *peek = nullptr;
  for (const isa::TensorDecl &t : program.tensors)
    if (t.name == o.peekTensor)
      peek = &t;
  if (!o.peekTensor.empty() && peek == nullptr)
    usage("--peek: the program has no tensor '" + o.peekTensor + "'");

  sim::SimOptions options;
  options.numerics = !o.timingOnly;
  options.trace = !o.trace.empty() || !o.stats.empty();
  options.activity = !o.trace.empty(); // only the trace shows them
  sim::Machine machine(config, program, options);
  if (options.numerics)
    sim::loadInputs(program, o.inputs, o.program, machine.deviceMemory());

  // The chip, and next to it either its own memory model or ours.
  const bool simple = o.memory == "simple";
  sim::ChipModule chip("chip", machine, /*quantum=*/1000,
                       simple ? sim::ChipMemory::External
                              : sim::ChipMemory::BuiltIn);
  std::unique_ptr<SimpleMemory> memory;
  if (simple) {
    memory = std::make_unique<SimpleMemory>(
        "memory",
        o.memoryBytes != 0 ? o.memoryBytes : machine.deviceMemory().sizeBytes(),
        sc_time(static_cast<double>(o.latencyNs), SC_NS));
    chip.memorySocket.bind(memory->socket);
  }
  machine.setMemoryPort(&chip);
  sc_start();
  machine.setMemoryPort(nullptr);
  if (const UserError *e = chip.userError()) {
    std::cerr << e->diagnostic().str() << "\n";
    return static_cast<int>(e->exitCode());
  }
  chip.throwIfFailed();
  machine.finish();

  if (peek != nullptr) {
    // The tensor's device bytes, straight from the memory module.
    const uint64_t bytes = peek->sizeSticks * isa::kStickBytes;
    std::vector<uint8_t> raw(bytes);
    if (chip.debugRead(peek->address * isa::kStickBytes, raw.data(), bytes) !=
        bytes)
      throw UserError(
          SourceLoc{o.peekTensor},
          "the memory module returned fewer bytes than the tensor has");
    sim::DeviceMemory view(machine.deviceMemory().sizeBytes());
    view.write(peek->address * isa::kStickBytes, raw.data(), bytes);
    writeFileAtomic(o.peekFile, serializeNpy(sim::readTensor(*peek, view)));
  }
  if (!o.outputs.empty())
    sim::saveOutputs(program, o.outputs, machine.deviceMemory());
  if (!o.stats.empty())
    writeFileAtomic(o.stats, sim::statsJson(machine));
  if (!o.trace.empty()) // gzipped when it ends in .gz, as spyre sim's
    writeFileEncoded(
        o.trace, [&](ByteSink &out) { sim::writeTraceJson(machine, out); });
  std::cout << sim::summaryText(machine);
  if (memory)
    std::cout << "memory       " << memory->transactions() << " transactions, "
              << o.latencyNs << " ns each ("
              << chip.cyclesAt(sc_time(static_cast<double>(o.latencyNs), SC_NS))
              << " cycles)\n";
  return machine.findings().empty() ? 0 : 3;
}

} // namespace

int sc_main(int argc, char **argv) {
  try {
    return simulate(parse(argc, argv));
  } catch (const spyre::UserError &e) {
    std::cerr << e.diagnostic().str() << "\n";
    return static_cast<int>(e.exitCode());
  }
}
