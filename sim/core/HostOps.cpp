// Host ops (HostOps.h).
#include "sim/core/HostOps.h"

#include "host/HostOp.h"
#include "sim/core/InstrFields.h"
#include "sim/core/ScheduleChecker.h"
#include "sim/core/TensorIo.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace spyre::sim {

HostTiming hostOpTiming(const hw::HwConfig &config, uint64_t bytesToHost,
                        uint64_t flops, uint64_t bytesFromHost) {
  // GB/s over Gcycles/s is bytes per chip cycle; GFLOP/s likewise flops
  // per cycle. Rounded up so that no part is free.
  const double ghz = config.chip.clockGhz;
  auto transfer = [&](uint64_t bytes) {
    return static_cast<Cycle>(config.host.pcieLatencyCycles) +
           static_cast<Cycle>(std::ceil(static_cast<double>(bytes) * ghz /
                                        config.host.pcieGBps));
  };
  HostTiming t;
  t.toHost = transfer(bytesToHost);
  t.compute = std::max<Cycle>(
      1, static_cast<Cycle>(std::ceil(static_cast<double>(flops) * ghz /
                                      config.host.hostGflops)));
  t.fromHost = transfer(bytesFromHost);
  return t;
}

void HostOps::run(StreamState &st, const isa::Instr &in) {
  const isa::Program &program = run_.program;
  const auto index = static_cast<uint32_t>(in[instrFields().hostOp]);
  SPYRE_ASSERT(index < program.hostOps.size(),
               "host op index past the HOST section; loading checks it");
  const isa::HostOpDecl &h = program.hostOps[index];
  auto bytesOf = [&](const std::vector<uint32_t> &tensors) {
    uint64_t n = 0;
    for (uint32_t t : tensors)
      n += program.tensors[t].sizeSticks * isa::kStickBytes;
    return n;
  };
  HostRun run;
  run.op = index;
  run.stream = static_cast<uint32_t>(st.index);
  run.bytesToHost = bytesOf(h.inputs);
  run.bytesFromHost = bytesOf(h.outputs);
  const HostTiming timing =
      hostOpTiming(run_.config, run.bytesToHost, h.flops, run.bytesFromHost);
  const Cycle duration = timing.toHost + timing.compute + timing.fromHost;
  const Cycle limit = run_.options.maxCycles;
  if (limit != 0 && st.time + duration > limit) {
    // As for device work: its cycles are known before the host computes
    // anything, and an op that cannot end before the limit is not run.
    run_.stop(FindingKind::MaxCycles, &st, limit,
              pastCycleLimitText(limit, "host op '" + h.name + "'", duration,
                                 st.time));
    return;
  }
  if (ScheduleChecker *checker = run_.checker) {
    checker->hostReads(st, h);
    for (uint32_t t : h.outputs)
      checker->markWritten(static_cast<int64_t>(program.tensors[t].address),
                           static_cast<int64_t>(program.tensors[t].sizeSticks));
  }
  if (run_.options.numerics) {
    std::string why;
    std::optional<nlohmann::json> attrs = host::parseHostAttrs(h.attrs, why);
    SPYRE_ASSERT(attrs, "host op attributes were checked at loading: " + why);
    std::vector<host::HostTensor> inputs;
    for (uint32_t t : h.inputs) {
      const isa::TensorDecl &d = program.tensors[t];
      inputs.push_back({d.hostShape, readTensorValues(d, run_.memory)});
    }
    std::vector<host::HostTensor> outputs =
        host::runHostOp({h.opType, std::move(*attrs)}, inputs);
    for (size_t k = 0; k < outputs.size(); ++k)
      writeTensorValues(program.tensors[h.outputs[k]], outputs[k].data,
                        run_.memory);
  }
  run.start = st.time;
  run.toHostEnd = run.start + timing.toHost;
  run.computeEnd = run.toHostEnd + timing.compute;
  run.end = run.computeEnd + timing.fromHost;
  if (Recorder *rec = run_.records) {
    TraceSlice &n = rec->current(st.index);
    n.bytes = run.bytesToHost + run.bytesFromHost;
    n.work = h.flops;
    run.slice = rec->nextSlice();
  }
  runs_.push_back(run);
  st.stats.busyCycles += run.end - run.start;
  run_.complete(st, run.end);
}

} // namespace spyre::sim
