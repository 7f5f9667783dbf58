#include "sim/core/Report.h"

#include "support/Hash.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace spyre::sim {

namespace {

using ordered_json = nlohmann::ordered_json;

double cyclesToUs(Cycle c, double clockGhz) {
  return static_cast<double>(c) / (clockGhz * 1000.0);
}

ordered_json findingJson(const Finding &f) {
  ordered_json j;
  j["kind"] = std::string(findingKindName(f.kind));
  j["cycle"] = f.cycle;
  j["core"] = f.core;
  j["stream"] = f.stream;
  j["instruction"] = f.instrIndex;
  j["text"] = f.instrText;
  j["source_op"] = f.sourceOp;
  j["address_range"] = f.addressRange;
  j["conflicting"] = f.conflicting;
  j["message"] = f.message;
  return j;
}

} // namespace

std::string statsJson(const Machine &m) {
  const hw::HwConfig &cfg = m.config();
  const double ghz = cfg.chip.clockGhz;
  const Cycle total = m.totalCycles();
  const double us = cyclesToUs(total, ghz);
  ordered_json j;
  j["program"] = m.program().name;
  j["config_fingerprint"] = hw::fingerprintString(cfg.fingerprint());
  j["total_cycles"] = total;
  j["clock_ghz"] = ghz;
  j["simulated_us"] = us;
  j["instructions"] = m.instructionsExecuted();
  j["dram_read_bytes"] = m.deviceReadBytes();
  j["dram_write_bytes"] = m.deviceWriteBytes();
  j["mac_ops"] = m.macOps();
  const double seconds = us * 1e-6;
  j["achieved_tflops"] =
      seconds > 0 ? 2.0 * static_cast<double>(m.macOps()) / seconds / 1e12 : 0.0;
  j["achieved_dram_gbps"] =
      seconds > 0 ? static_cast<double>(m.deviceReadBytes() + m.deviceWriteBytes()) /
                        seconds / 1e9
                  : 0.0;
  const MemoryChannel &mem = m.timing().memory();
  j["memory"] = {{"peak_gbps", mem.peakGBps()},
                 {"sustained_bytes_per_cycle", mem.sustainedBytesPerCycle()},
                 {"busy_cycles", mem.busyCycles()},
                 {"turnarounds", mem.stats().turnarounds},
                 {"paired_bytes", mem.stats().pairedBytes},
                 {"mixed_penalty_cycles", mem.stats().mixedPenaltyCycles},
                 {"waited_cycles", mem.stats().waitedCycles}};
  ordered_json findings = ordered_json::array();
  for (const Finding &f : m.findings())
    findings.push_back(findingJson(f));
  j["findings"] = findings;
  j["findings_dropped"] = m.findingsDropped();

  ordered_json cores = ordered_json::array();
  for (int core = 0; core < cfg.chip.cores; ++core) {
    ordered_json engines = ordered_json::array();
    for (int s = 0; s < m.numStreams(); ++s) {
      const isa::Stream &code = m.streamCode(s);
      if (code.core != core)
        continue;
      const EngineStats &es = m.streamStats(s);
      ordered_json e;
      e["engine"] = isa::engineUnitName(code.engine, code.unit);
      e["instructions"] = es.instructions;
      e["busy_cycles"] = es.busyCycles;
      ordered_json stalls;
      Cycle stalled = 0;
      for (int r = 0; r < kNumStallReasons; ++r) {
        stalls[std::string(stallReasonName(static_cast<StallReason>(r)))] =
            es.stallCycles[static_cast<size_t>(r)];
        stalled += es.stallCycles[static_cast<size_t>(r)];
      }
      e["stall_cycles"] = stalls;
      e["idle_cycles"] = total >= es.busyCycles + stalled
                             ? total - es.busyCycles - stalled
                             : 0;
      e["utilization"] =
          total > 0 ? static_cast<double>(es.busyCycles) / static_cast<double>(total)
                    : 0.0;
      engines.push_back(e);
    }
    if (engines.empty())
      continue;
    ordered_json c;
    c["core"] = core;
    c["lx_high_water_bytes"] = m.lxHighWaterSticks(core) * isa::kStickBytes;
    c["engines"] = engines;
    cores.push_back(c);
  }
  j["cores"] = cores;
  // Program and op names are bytes from the program file, not always UTF-8.
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string traceJson(const Machine &m) {
  const double ghz = m.config().chip.clockGhz;
  // Perfetto turns microsecond timestamps into whole nanoseconds, rounding ts
  // and dur separately. Round each slice's ends to whole nanoseconds first
  // and print exact three-decimal microseconds, so slices that meet in
  // cycles meet in the viewer and never overlap.
  auto ns = [&](Cycle c) {
    return static_cast<uint64_t>(std::llround(static_cast<double>(c) / ghz));
  };
  auto usText = [](uint64_t nanos) {
    return fmt::format("{}.{:03d}", nanos / 1000, nanos % 1000);
  };
  auto us = [&](Cycle c) { return usText(ns(c)); };
  auto durUs = [&](Cycle start, Cycle end) { return usText(ns(end) - ns(start)); };
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string &event) {
    if (!first)
      out += ",\n";
    first = false;
    out += event;
  };
  auto str = [](const std::string &s) {
    return ordered_json(s).dump(-1, ' ', false,
                                ordered_json::error_handler_t::replace);
  };
  // Names: one process per core, one thread per stream.
  std::vector<bool> namedCore(static_cast<size_t>(m.config().chip.cores), false);
  for (int s = 0; s < m.numStreams(); ++s) {
    const isa::Stream &code = m.streamCode(s);
    if (!namedCore[static_cast<size_t>(code.core)]) {
      namedCore[static_cast<size_t>(code.core)] = true;
      emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                       "\"args\":{{\"name\":\"core {}\"}}}}",
                       code.core, code.core));
      emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                       "\"args\":{{\"sort_index\":{}}}}}",
                       code.core, code.core));
    }
    emit(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"name\":{}}}}}",
                     code.core, s, str(isa::engineUnitName(code.engine, code.unit))));
  }
  for (const TraceSlice &t : m.trace()) {
    const isa::Stream &code = m.streamCode(static_cast<int>(t.stream));
    const isa::Instr &in = code.code[t.instr];
    const std::string *op = m.program().provenanceOf(code, t.instr);
    emit(fmt::format(
        "{{\"ph\":\"X\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},\"ts\":{},"
        "\"dur\":{},\"args\":{{\"instr\":{},\"index\":{},\"op\":{},"
        "\"start_cycle\":{},\"end_cycle\":{}}}}}",
        str(std::string(in.desc().mnemonic)),
        str(std::string(isa::engineName(code.engine))), code.core, t.stream,
        us(t.start), durUs(t.start, t.end), str(isa::formatInstr(in)), t.instr,
        str(op ? *op : std::string()), t.start, t.end));
  }
  for (const Finding &f : m.findings()) {
    emit(fmt::format("{{\"ph\":\"i\",\"s\":\"g\",\"name\":{},\"pid\":0,\"tid\":0,"
                     "\"ts\":{},\"args\":{{\"message\":{}}}}}",
                     str(std::string(findingKindName(f.kind))), us(f.cycle),
                     str(f.str())));
  }
  out += "\n]}\n";
  return out;
}

std::string summaryText(const Machine &m) {
  const double ghz = m.config().chip.clockGhz;
  std::string out;
  out += fmt::format("program      {}\n", m.program().name.empty()
                                              ? std::string("(unnamed)")
                                              : m.program().name);
  out += fmt::format("cycles       {}\n", m.totalCycles());
  out += fmt::format("simulated    {:.3f} us at {} GHz\n",
                     cyclesToUs(m.totalCycles(), ghz), ghz);
  out += fmt::format("instructions {}\n", m.instructionsExecuted());
  out += fmt::format("device mem   {} bytes read, {} bytes written\n",
                     m.deviceReadBytes(), m.deviceWriteBytes());
  if (m.macOps() > 0)
    out += fmt::format("MACs         {}\n", m.macOps());
  out += fmt::format("findings     {}\n", m.findings().size() + m.findingsDropped());
  for (const Finding &f : m.findings())
    out += "  " + f.str() + "\n";
  return out;
}

} // namespace spyre::sim
