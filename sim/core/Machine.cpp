// The event loop over the Machine's parts (Machine.h).
#include "sim/core/Machine.h"

#include "sim/core/ScheduleChecker.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <limits>

namespace spyre::sim {

// ---------------------------------------------------------------- ChipTiming

ChipTiming::ChipTiming(const hw::HwConfig &config)
    : costs_(config), memory_(config), dataRing_(Ring::dataRing(config)),
      reduceRing_(Ring::reduceRing(config)) {}

DmaRunTiming ChipTiming::dmaBurst(Cycle t, int core, uint64_t /*addrBytes*/,
                                  uint64_t bytes, Direction dir, bool newRun,
                                  uint8_t * /*data*/) {
  return timeDmaRun(costs_, memory_, dataRing_, t, core, bytes, dir, newRun);
}

// ------------------------------------------------------------------ Machine

namespace {

std::unique_ptr<DeviceMemory> ownMemoryUnless(const hw::HwConfig &config,
                                              DeviceMemory *given) {
  if (given)
    return nullptr;
  return std::make_unique<DeviceMemory>(
      static_cast<uint64_t>(config.memory.sizeBytes));
}

} // namespace

Machine::Machine(const hw::HwConfig &config, const isa::Program &program,
                 SimOptions options, MemoryPort *port, DeviceMemory *memory)
    : timing_(config), ownedMemory_(ownMemoryUnless(config, memory)),
      run_(config, program, std::move(options), port ? port : &timing_,
           memory ? *memory : *ownedMemory_),
      dma_(run_, timing_.costs()),
      sync_(run_, timing_.dataRing(), timing_.reduceRing()), host_(run_),
      exec_(run_, timing_.costs(), dma_, sync_, host_) {
  const int cores = config.chip.cores;
  const int streams = static_cast<int>(program.streams.size());
  if (run_.options.checks) {
    checker_ =
        std::make_unique<ScheduleChecker>(config, program, run_.findings);
    run_.checker = checker_.get();
  }
  if (run_.options.trace) {
    records_ =
        std::make_unique<Recorder>(cores, streams, timing_.memory(),
                                   timing_.dataRing(), timing_.reduceRing(),
                                   run_.options.activity);
    run_.records = records_.get();
  }
  // Host memory follows what the program uses: LX contents only for cores
  // that run a stream, transfer channels only for pairs that talk.
  run_.lx.resize(static_cast<size_t>(cores));
  run_.streams.resize(program.streams.size());
  for (int i = 0; i < streams; ++i) {
    StreamState &st = run_.streams[static_cast<size_t>(i)];
    st.code = &program.streams[static_cast<size_t>(i)];
    st.index = i;
    st.core = st.code->core;
    SPYRE_ASSERT(st.core >= 0 && st.core < cores,
                 "program stream on a core the config does not have");
    if (run_.options.numerics)
      run_.lx[static_cast<size_t>(st.core)].assign(
          static_cast<size_t>(config.lx.sizeBytes), 0);
    if (records_)
      records_->addCore(st.core, config.lxSticks());
    run_.resume(st);
  }

  // Inputs and constants hold data before the run; constants are loaded here.
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.kind == isa::TensorKind::Input || t.kind == isa::TensorKind::Const)
      markMemoryWritten(static_cast<int64_t>(t.address),
                        static_cast<int64_t>(t.sizeSticks));
    if (t.kind == isa::TensorKind::Const && run_.options.numerics &&
        !t.data.empty())
      run_.memory.write(t.address * isa::kStickBytes, t.data.data(),
                        t.data.size());
  }
}

Machine::~Machine() = default;

void Machine::markMemoryWritten(int64_t firstStick, int64_t sticks) {
  if (checker_)
    checker_->markWritten(firstStick, sticks);
}

const SliceLog &Machine::trace() const {
  static const SliceLog kNone;
  return records_ ? records_->slices() : kNone;
}

const ActivityCounters &Machine::activity() const {
  static const ActivityCounters kNone;
  return records_ ? records_->activity() : kNone;
}

std::optional<Cycle> Machine::nextEventTime() const {
  if (run_.queue.empty() || run_.stopped)
    return std::nullopt;
  return run_.queue.top().time;
}

void Machine::run() {
  runUntil(std::numeric_limits<Cycle>::max());
  finish();
}

void Machine::runUntil(Cycle horizon) {
  const Cycle limit = run_.options.maxCycles;
  while (!run_.stopped && !run_.queue.empty() &&
         run_.queue.top().time < horizon) {
    const Event e = run_.queue.top();
    if (limit != 0 && e.time > limit) {
      run_.stop(FindingKind::MaxCycles, nullptr, limit,
                "the run passed --max-cycles " + std::to_string(limit) +
                    " with streams still running");
      return;
    }
    run_.queue.pop();
    StreamState &st = run_.streams[static_cast<size_t>(e.stream())];
    switch (e.kind()) {
    case EventKind::Step:
      st.time = std::max(st.time, e.time);
      exec_.run(st);
      break;
    case EventKind::DmaBurst:
      if (dma_.resume(st, e.time))
        run_.resume(st);
      break;
    }
  }
}

void Machine::finish() {
  if (finished_)
    return;
  finished_ = true;
  for (StreamState &st : run_.streams) {
    if (st.halted)
      continue;
    st.stats.finishedAt = st.time;
    if (run_.stopped)
      continue; // a limit stopped the run: not a deadlock
    run_.findings.report(FindingKind::Deadlock, &st, st.time,
                         sync_.blockedText(st));
    // The blocked instruction waited until the end of the run: sync stall,
    // and a trace slice so the trace shows where it hangs.
    const Cycle endOfRun = std::max(run_.totalCycles, st.blockedSince);
    st.stats.stall(StallReason::Deadlock, endOfRun - st.blockedSince);
    if (records_)
      records_->record(st, st.instrStart, endOfRun);
  }
}

} // namespace spyre::sim
