// Stream execution (StreamExecutor.h).
#include "sim/core/StreamExecutor.h"

#include "sim/core/DmaEngines.h"
#include "sim/core/HostOps.h"
#include "sim/core/InstrFields.h"
#include "sim/core/ScheduleChecker.h"
#include "sim/core/Semantics.h"
#include "sim/core/SyncFabric.h"
#include "support/Diagnostic.h"
#include "support/HostMemory.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace spyre::sim {

using isa::Engine;
using isa::Instr;
using isa::Opcode;

namespace {

/// "mm of 1048576 MACs", "exp of 4096 sticks", "send of 64 sticks".
std::string workText(const Instr &r, const ComputeCost &compute, bool ring) {
  const Opcode op = r.opcode;
  const std::string name(r.desc().mnemonic);
  if (op == Opcode::Mm || op == Opcode::Mmi8)
    return name + " of " + std::to_string(compute.work) + " MACs";
  if (!ring)
    return name + " of " + std::to_string(compute.work) + " sticks";
  return name + " of " + std::to_string(rowSticksOf(r)) + " sticks";
}

/// Whether a stream may execute the instruction ahead of the chip's global
/// time. Only the shared timelines (memory channel, rings) need their
/// requests in time order. Synchronisation does not: a signal's token
/// carries the cycle it becomes visible, a wait completes no earlier than
/// the tokens it takes, and a barrier releases at its last arrival, so
/// their times do not depend on the order in which streams are processed.
bool isLocal(Opcode op) {
  switch (op) {
  case Opcode::Ld:
  case Opcode::St:
  case Opcode::Send:
  case Opcode::Recv:
  case Opcode::Rsend:
  case Opcode::Racc:
  case Opcode::Host: // reads and writes device memory other streams use
    return false;
  default:
    return true;
  }
}

} // namespace

StreamExecutor::StreamExecutor(RunState &run, const CostModel &costs,
                               DmaEngines &dma, SyncFabric &sync, HostOps &host)
    : run_(run), costs_(costs), dma_(dma), sync_(sync), host_(host),
      scalarCycles_(static_cast<Cycle>(run.config.sequencer.scalarCycles)),
      ctrlCycles_(static_cast<Cycle>(run.config.sequencer.ctrlCycles)),
      instructionLimit_(run.options.maxInstructions != 0
                            ? run.options.maxInstructions
                            : std::numeric_limits<uint64_t>::max()),
      recordLimit_(run.options.maxRecords != 0
                       ? run.options.maxRecords
                       : std::numeric_limits<uint64_t>::max()),
      lxSticks_(run.config.lxSticks()),
      memSticks_(run.config.memory.sizeBytes / isa::kStickBytes),
      plans_(run.program, costs),
      lxHighWater_(static_cast<size_t>(run.config.chip.cores), 0) {}

void StreamExecutor::run(StreamState &st) {
  while (!run_.stopped) {
    if (st.halted || st.block != Block::None)
      return;
    const Cycle limit = run_.options.maxCycles;
    if (limit != 0 && st.time > limit) {
      run_.stop(FindingKind::MaxCycles, &st, limit,
                "the run passed --max-cycles " + std::to_string(limit) +
                    " with streams still running");
      return;
    }
    if (!execute(st))
      return;
    if (st.pc >= st.code->code.size()) {
      SPYRE_UNREACHABLE("a stream ran past its end; program loading checks "
                        "that every stream ends with halt");
    }
    // Local work (no shared state) may run ahead. Anything else runs in
    // place only when this stream is still the earliest event of the chip
    // (ahead of the queue's top in (time, core, stream) order); otherwise it
    // goes back through the queue.
    if (run_.queue.empty() || isLocal(st.code->code[st.pc].opcode))
      continue;
    if (!run_.queue.isEarliest(st.time, st.core, st.index)) {
      run_.resume(st);
      return;
    }
  }
}

Instr StreamExecutor::resolve(const StreamState &st, const Instr &in) const {
  Instr out = in;
  const isa::InstrDesc &d = in.desc();
  for (size_t f = 0; f < d.fields.size(); ++f)
    if (d.fields[f].isAddress()) {
      out.value[f] = st.regs[in.base[f]] + in.value[f];
      out.base[f] = 0;
    }
  return out;
}

Instr StreamExecutor::resolve(const StreamState &st, const Instr &in,
                              const InstrPlan &plan) const {
  Instr out = in;
  for (uint8_t k = 0; k < plan.addressCount; ++k) {
    const size_t f = plan.addressFields[k];
    out.value[f] = st.regs[in.base[f]] + in.value[f];
    out.base[f] = 0;
  }
  return out;
}

Cycle StreamExecutor::ctrlCycles(Opcode op) const {
  if (op == Opcode::Halt)
    return 0;
  if (op == Opcode::Li || op == Opcode::Addi || op == Opcode::Lr)
    return scalarCycles_;
  return ctrlCycles_;
}

void StreamExecutor::noteProgress(const StreamState &st) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          std::max(0.0, run_.options.progressSeconds)));
  if (runStart_ == Clock::time_point{}) {
    runStart_ = now;
    nextProgress_ = now + interval;
    return;
  }
  if (now < nextProgress_)
    return;
  nextProgress_ = now + interval;
  run_.options.progress(
      RunProgress{st.time, run_.instructions,
                  std::chrono::duration<double>(now - runStart_).count(),
                  run_.config.chip.clockGhz});
}

void StreamExecutor::stopAtLimit(StreamState &st) {
  const SimOptions &o = run_.options;
  if (run_.instructions >= instructionLimit_) {
    run_.stop(FindingKind::MaxInstructions, &st, st.time,
              "the run passed its budget of " +
                  std::to_string(o.maxInstructions) + " instructions");
    return;
  }
  const size_t kept = run_.records->slices().size();
  run_.stop(FindingKind::MaxRecords, &st, st.time,
            "the run kept " + std::to_string(kept) + " records (" +
                memorySizeText(kept * sizeof(TraceSlice)) +
                "), its limit; raise --max-records, or run without --stats "
                "and --trace");
}

bool StreamExecutor::execute(StreamState &st) {
  const Instr &in = st.code->code[st.pc];
  const InstrFields &fp = instrFields();
  Recorder *const rec = run_.records;
  if (run_.instructions >= instructionLimit_ ||
      (rec && rec->slices().size() >= recordLimit_)) [[unlikely]] {
    stopAtLimit(st);
    return false;
  }
  ++run_.instructions;
  if (run_.options.progress && (run_.instructions & 0x3FFF) == 0)
    noteProgress(st);
  ++st.stats.instructions;
  st.instrStart = st.time;
  if (rec)
    rec->begin(st);
  const Opcode op = in.opcode;
  switch (op) {
  case Opcode::Nop:
    st.stats.busyCycles += ctrlCycles(op);
    run_.complete(st, st.time + ctrlCycles(op));
    return true;
  case Opcode::Li:
    if (in[fp.liRd] != 0)
      st.regs[static_cast<size_t>(in[fp.liRd])] = in[fp.liImm];
    st.stats.busyCycles += ctrlCycles(op);
    run_.complete(st, st.time + ctrlCycles(op));
    return true;
  case Opcode::Addi: {
    // 32-bit registers: the sum wraps modulo 2^32 as the ISA says.
    auto sum = static_cast<uint32_t>(
        st.regs[static_cast<size_t>(in[fp.addiRs])] + in[fp.addiImm]);
    if (in[fp.addiRd] != 0)
      st.regs[static_cast<size_t>(in[fp.addiRd])] = static_cast<int32_t>(sum);
    st.stats.busyCycles += ctrlCycles(op);
    run_.complete(st, st.time + ctrlCycles(op));
    return true;
  }
  case Opcode::Loop: {
    SPYRE_ASSERT(st.depth < static_cast<int>(st.loops.size()),
                 "loop nesting deeper than the program checks allow");
    auto first = st.pc + 1;
    auto end = first + static_cast<uint32_t>(in[fp.loopBody]);
    st.loops[st.depth++] = {first, end,
                            static_cast<uint32_t>(in[fp.loopCount])};
    st.stats.busyCycles += ctrlCycles(op);
    if (rec)
      rec->record(st, st.time, st.time + ctrlCycles(op));
    st.time += ctrlCycles(op);
    st.pc = first;
    return true;
  }
  case Opcode::Halt:
    st.halted = true;
    st.stats.finishedAt = st.time;
    if (rec)
      rec->record(st, st.time, st.time);
    run_.totalCycles = std::max(run_.totalCycles, st.time);
    return false;
  case Opcode::Signal:
    sync_.signal(st, in);
    return true;
  case Opcode::Wait:
    return sync_.wait(st, in);
  case Opcode::Barrier:
    return sync_.barrier(st, in);
  case Opcode::Host:
    host_.run(st, in);
    return !run_.stopped;
  case Opcode::Lr:
    return registerLoad(st, in);
  default:
    return executeData(st, in);
  }
}

bool StreamExecutor::executeData(StreamState &st, const Instr &in) {
  Recorder *const rec = run_.records;
  const Opcode op = in.opcode;
  // An instruction that ran before has its plan: its regions from its base
  // registers, its cost known. The first run, and one without a plan,
  // resolves and decodes it.
  const InstrPlan *plan = plans_.find(st.index, st.pc);
  const Instr r = plan ? resolve(st, in, *plan) : resolve(st, in);
  if (!plan) {
    if (std::string err = operandError(r); !err.empty()) {
      run_.stop(FindingKind::InvalidOperand, &st, st.time, std::move(err));
      return false;
    }
  }
  const bool dma = op == Opcode::Ld || op == Opcode::St;
  const bool ring = op == Opcode::Send || op == Opcode::Recv ||
                    op == Opcode::Rsend || op == Opcode::Racc;
  footprint_.clear();
  spans_.clear();
  if (plan) {
    for (uint8_t k = 0; k < plan->accessCount; ++k) {
      const PlannedAccess &a = plan->accesses[k];
      Footprint f = a.footprint;
      f.region.base += st.regs[a.baseReg];
      footprint_.push_back(f);
      spans_.push_back(
          {f.region.base + a.lowOffset, f.region.base + a.highOffset});
    }
  } else {
    footprint(r, footprint_);
    for (const Footprint &f : footprint_)
      spans_.push_back({f.region.lowest(), f.region.highest()});
  }
  if (dma && dma_.pastCycleLimit(st, footprint_))
    return false;
  // PT and SFU: local to the core; numbers now, time from the cost model.
  const ComputeCost compute = dma || ring ? ComputeCost{}
                              : plan      ? plan->compute
                                          : computeCost(r, costs_);
  if (const Cycle limit = run_.options.maxCycles; limit != 0 && !dma) {
    // As for a ld/st: work that cannot end before the limit is not run, since
    // walking its rows (checks, numbers) would take the host far longer than
    // the limit allows for. PT and SFU costs are exact; a transfer cannot end
    // sooner than its ring allows even with its peer already waiting.
    const Cycle least =
        ring ? sync_.leastTransferCycles(st.core, r) : compute.cycles;
    if (st.time + least > limit) {
      run_.stop(FindingKind::MaxCycles, &st, limit,
                pastCycleLimitText(limit, workText(r, compute, ring), least,
                                   st.time));
      return false;
    }
  }
  const bool inBounds =
      checkAccesses(st, op == Opcode::Recv || op == Opcode::Racc);
  if (rec)
    rec->footprint(st, footprint_, spans_);
  if (dma)
    return dma_.start(st, r, footprint_, inBounds);
  if (ring) {
    SPYRE_ASSERT(!footprint_.empty(), "ring instruction without a region");
    return sync_.transfer(st, r, footprint_.front().region, inBounds);
  }

  if (op == Opcode::Mm || op == Opcode::Mmi8)
    macOps_ += compute.work;
  if (rec)
    rec->current(st.index).work = compute.work;
  if (inBounds && run_.options.numerics)
    executeCompute(r, run_.lx[static_cast<size_t>(st.core)].data());
  st.stats.busyCycles += compute.cycles;
  run_.complete(st, st.time + compute.cycles);
  return true;
}

bool StreamExecutor::registerLoad(StreamState &st, const Instr &in) {
  const Instr r = resolve(st, in);
  // The stick read is checked like any LX read (bounds, races, reads of
  // bytes never written).
  footprint_.clear();
  spans_.clear();
  footprint(r, footprint_);
  for (const Footprint &f : footprint_)
    spans_.push_back({f.region.lowest(), f.region.highest()});
  if (!checkAccesses(st, false)) {
    run_.stopped = true;
    return false;
  }
  if (Recorder *rec = run_.records)
    rec->footprint(st, footprint_, spans_);
  // Timing-only runs hold no LX contents: the index reads as 0, which only
  // moves the addresses it feeds.
  int32_t value = 0;
  if (run_.options.numerics)
    std::memcpy(&value,
                run_.lx[static_cast<size_t>(st.core)].data() +
                    r[isa::Field::Lx] * isa::kStickBytes +
                    r[isa::Field::Lane] * int64_t{4},
                sizeof value);
  const int64_t limit = r[isa::Field::Limit];
  if (value < 0 || value >= limit) {
    run_.findings.report(FindingKind::IndexOutOfRange, &st, st.time,
                         "index " + std::to_string(value) + " (lane " +
                             std::to_string(r[isa::Field::Lane]) +
                             ") is outside [0, " + std::to_string(limit) + ")",
                         sticksText("lx", r[isa::Field::Lx], r[isa::Field::Lx]));
    run_.stopped = true;
    return false;
  }
  if (const int64_t rd = r[isa::Field::Rd]; rd != 0)
    st.regs[static_cast<size_t>(rd)] = value;
  st.stats.busyCycles += ctrlCycles(Opcode::Lr);
  run_.complete(st, st.time + ctrlCycles(Opcode::Lr));
  return true;
}

bool StreamExecutor::checkAccesses(StreamState &st, bool deferLxWrites) {
  int64_t &highWater = lxHighWater_[static_cast<size_t>(st.core)];
  int64_t lxHighest = -1;
  bool ok = true;
  for (size_t k = 0; k < footprint_.size(); ++k) {
    const Footprint &f = footprint_[k];
    const auto [lo, hi] = spans_[k];
    const int64_t limit = f.deviceMemory ? memSticks_ : lxSticks_;
    if (lo >= 0 && hi < limit) [[likely]] {
      if (!f.deviceMemory)
        lxHighest = std::max(lxHighest, hi);
      continue;
    }
    run_.findings.report(FindingKind::OutOfBounds, &st, st.time,
                         std::string(f.write ? "write" : "read") + " outside " +
                             (f.deviceMemory ? "device memory" : "LX") +
                             " (size " + isa::hexText(limit) + " sticks)",
                         sticksText(f.deviceMemory ? "mem" : "lx", lo, hi));
    ok = false;
  }
  if (!ok)
    return false;
  highWater = std::max(highWater, lxHighest + 1);
  if (run_.checker)
    run_.checker->accessed(st, footprint_, deferLxWrites);
  return true;
}

} // namespace spyre::sim
