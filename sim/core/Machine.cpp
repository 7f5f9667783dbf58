// The event loop, the streams and the synchronisation objects (Machine.h).
// Size: the loop, streams and sync objects stay together until split (issue 18).
#include "sim/core/Machine.h"

#include "sim/core/Semantics.h"
#include "sim/core/TensorIo.h"

#include "host/HostOp.h"
#include "support/Diagnostic.h"
#include "support/Hash.h"
#include "support/HostMemory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace spyre::sim {

using isa::Engine;
using isa::Instr;
using isa::Opcode;

namespace {

/// Field positions the machine reads, resolved once from the table so that
/// nothing here repeats the table's field order.
struct FieldPos {
  int liRd, liImm, addiRd, addiRs, addiImm, loopCount, loopBody;
  int sigCounter, sigValue, sigCore, waitCounter, waitValue, barId, barCount;
  int ringCore, mmM, mmK, mmN;
  int xposeM, xposeK;
  int hostOp;
  int cvtTo;
  /// Per opcode: the position of its `n` (sticks per row), `m` (rows) and
  /// `fmt` (element format) fields, -1 where it has none; looked up once,
  /// not per instruction.
  std::array<int8_t, 256> rowSticks{}, rows{}, fmt{};

  FieldPos() {
    auto at = [](Opcode op, isa::Field field) {
      int i = isa::fieldIndex(op, field);
      SPYRE_ASSERT(i >= 0, "ISA table lacks a field the simulator reads");
      return i;
    };
    liRd = at(Opcode::Li, isa::Field::Rd);
    liImm = at(Opcode::Li, isa::Field::Imm);
    addiRd = at(Opcode::Addi, isa::Field::Rd);
    addiRs = at(Opcode::Addi, isa::Field::Rs);
    addiImm = at(Opcode::Addi, isa::Field::Imm);
    loopCount = at(Opcode::Loop, isa::Field::Count);
    loopBody = at(Opcode::Loop, isa::Field::Body);
    sigCounter = at(Opcode::Signal, isa::Field::Counter);
    sigValue = at(Opcode::Signal, isa::Field::Value);
    sigCore = at(Opcode::Signal, isa::Field::Core);
    waitCounter = at(Opcode::Wait, isa::Field::Counter);
    waitValue = at(Opcode::Wait, isa::Field::Value);
    barId = at(Opcode::Barrier, isa::Field::Id);
    barCount = at(Opcode::Barrier, isa::Field::Count);
    ringCore = at(Opcode::Send, isa::Field::Core);
    mmM = at(Opcode::Mm, isa::Field::M);
    mmK = at(Opcode::Mm, isa::Field::K);
    mmN = at(Opcode::Mm, isa::Field::N);
    cvtTo = at(Opcode::Cvt, isa::Field::To);
    rowSticks.fill(-1);
    rows.fill(-1);
    fmt.fill(-1);
    for (const isa::InstrDesc &d : isa::instructionTable()) {
      rowSticks[static_cast<size_t>(d.opcode)] =
          static_cast<int8_t>(isa::fieldIndex(d.opcode, isa::Field::N));
      rows[static_cast<size_t>(d.opcode)] =
          static_cast<int8_t>(isa::fieldIndex(d.opcode, isa::Field::M));
      fmt[static_cast<size_t>(d.opcode)] =
          static_cast<int8_t>(isa::fieldIndex(d.opcode, isa::Field::Fmt));
    }
    xposeM = at(Opcode::Xpose, isa::Field::M);
    xposeK = at(Opcode::Xpose, isa::Field::K);
    hostOp = at(Opcode::Host, isa::Field::Op);
  }
};

const FieldPos &fields() {
  static const FieldPos f;
  return f;
}

bool isSfu(Opcode op) {
  return isa::instrDesc(op).runsOn(Engine::Sfu) &&
         !isa::instrDesc(op).runsOn(Engine::Pt);
}

SfuClass sfuClassOf(isa::TimingClass t) {
  switch (t) {
  case isa::TimingClass::SfuTranscendental:
    return SfuClass::Transcendental;
  case isa::TimingClass::SfuReduce:
    return SfuClass::Reduce;
  default:
    return SfuClass::Simple;
  }
}

/// n sticks per row times m rows, for the instructions that have those
/// fields (a missing one counts as 1).
uint64_t rowSticksOf(const Instr &r) {
  const FieldPos &fp = fields();
  const int nf = fp.rowSticks[static_cast<size_t>(r.opcode)],
            mf = fp.rows[static_cast<size_t>(r.opcode)];
  return static_cast<uint64_t>(nf >= 0 ? r[static_cast<size_t>(nf)] : 1) *
         static_cast<uint64_t>(mf >= 0 ? r[static_cast<size_t>(mf)] : 1);
}

/// A PT or SFU instruction's cycles and work (MACs, or sticks), from its
/// count fields alone: known before the instruction walks its rows.
struct ComputeCost {
  Cycle cycles = 0;
  uint64_t work = 0;
};

ComputeCost computeCost(const Instr &r, const CostModel &costs) {
  const FieldPos &fp = fields();
  const Opcode op = r.opcode;
  if (op == Opcode::Mm || op == Opcode::Mmi8) {
    auto m = static_cast<uint64_t>(r[fp.mmM]),
         k = static_cast<uint64_t>(r[fp.mmK]),
         n = static_cast<uint64_t>(r[fp.mmN]);
    return {costs.ptCycles(m, k, n,
                           op == Opcode::Mmi8 ? PtPrecision::Int8
                                              : PtPrecision::Dl16),
            m * k * n};
  }
  SPYRE_ASSERT(isSfu(op), "unhandled opcode in the simulator");
  uint64_t sticks = rowSticksOf(r);
  // xpose has no rows of n sticks: it reads m sticks and writes k.
  if (op == Opcode::Xpose)
    sticks = static_cast<uint64_t>(r[fp.xposeM] + r[fp.xposeK]);
  // The format the arrays work in: the fmt field (0 dl16, 1 f32), or for
  // cvt the source format (the one `to` is not).
  const int ff = fp.fmt[static_cast<size_t>(op)];
  bool f32 = ff >= 0 && r[static_cast<size_t>(ff)] != 0;
  if (op == Opcode::Cvt)
    f32 = r[static_cast<size_t>(fp.cvtTo)] == 0;
  return {costs.sfuCycles(sfuClassOf(r.desc().timing), sticks,
                          f32 ? SfuFormat::Fp32 : SfuFormat::Dl16),
          sticks};
}

/// The fewest cycles a ring transfer can take after it is posted: it starts
/// no earlier, crosses at least one hop and holds its links for its bytes
/// over the ring's width (Ring::transfer). A transfer between a core and
/// itself uses no link and costs nothing.
Cycle leastRingCycles(const ChipTiming &timing, int core, const Instr &r) {
  if (static_cast<int>(r[fields().ringCore]) == core)
    return 0;
  const bool reduce = r.opcode == Opcode::Rsend || r.opcode == Opcode::Racc;
  const Ring &ring = reduce ? timing.reduceRing() : timing.dataRing();
  return ring.hopLatencyCycles() +
         ring.durationCycles(rowSticksOf(r) * isa::kStickBytes);
}

/// "mm of 1048576 MACs", "exp of 4096 sticks", "send of 64 sticks".
std::string workText(const Instr &r, const ComputeCost &compute) {
  const Opcode op = r.opcode;
  const std::string name(r.desc().mnemonic);
  if (op == Opcode::Mm || op == Opcode::Mmi8)
    return name + " of " + std::to_string(compute.work) + " MACs";
  if (isSfu(op))
    return name + " of " + std::to_string(compute.work) + " sticks";
  return name + " of " + std::to_string(rowSticksOf(r)) + " sticks";
}

std::string pastCycleLimitText(Cycle limit, const std::string &work,
                               Cycle least, Cycle from) {
  return "the run passed --max-cycles " + std::to_string(limit) + ": " + work +
         " cannot end before it (at least " + std::to_string(least) +
         " cycles from cycle " + std::to_string(from) + ")";
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

// ---------------------------------------------------------------- ChipTiming

ChipTiming::ChipTiming(const hw::HwConfig &config)
    : costs_(config), memory_(config), dataRing_(Ring::dataRing(config)),
      reduceRing_(Ring::reduceRing(config)) {}

DmaRunTiming ChipTiming::dmaBurst(Cycle t, int core, uint64_t /*addrBytes*/,
                                  uint64_t bytes, Direction dir, bool newRun,
                                  uint8_t * /*data*/) {
  return timeDmaRun(costs_, memory_, dataRing_, t, core, bytes, dir, newRun);
}

// ----------------------------------------------------------- host timing

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

// ------------------------------------------------------------------ Machine

Machine::Machine(const hw::HwConfig &config, const isa::Program &program,
                 SimOptions options, MemoryPort *port, DeviceMemory *memory)
    : config_(config), program_(program), options_(options), timing_(config),
      port_(port ? port : &timing_),
      ownedMemory_(memory
                       ? nullptr
                       : std::make_unique<DeviceMemory>(
                             static_cast<uint64_t>(config.memory.sizeBytes))),
      memory_(memory ? *memory : *ownedMemory_),
      hb_(static_cast<int>(program.streams.size())) {
  const int cores = config.chip.cores;
  // Host memory follows what the program uses: LX contents only for cores
  // that run a stream, transfer channels only for pairs that talk.
  lx_.resize(static_cast<size_t>(cores));
  lxHighWater_.assign(static_cast<size_t>(cores), 0);
  streamsOfCore_.resize(static_cast<size_t>(cores));
  counters_.resize(static_cast<size_t>(cores) *
                   static_cast<size_t>(config.limits.syncCountersPerCore));
  barriers_.resize(static_cast<size_t>(config.limits.barriers));
  if (options_.checks)
    shadow_ = std::make_unique<LxShadow>(cores, config.lxSticks());

  streams_.resize(program.streams.size());
  for (size_t i = 0; i < program.streams.size(); ++i) {
    StreamState &st = streams_[i];
    st.code = &program.streams[i];
    st.index = static_cast<int>(i);
    st.core = st.code->core;
    SPYRE_ASSERT(st.core >= 0 && st.core < cores,
                 "program stream on a core the config does not have");
    streamsOfCore_[static_cast<size_t>(st.core)].push_back(st.index);
    if (options_.numerics)
      lx_[static_cast<size_t>(st.core)].assign(
          static_cast<size_t>(config.lx.sizeBytes), 0);
    if (options_.trace) {
      activity_.lxFirstWrite.resize(static_cast<size_t>(cores));
      activity_.lxFirstWrite[static_cast<size_t>(st.core)].assign(
          static_cast<size_t>(config.lxSticks()), ActivityCounters::kNever);
    }
    push(EventKind::Step, 0, st.core, st.index);
  }

  // Inputs and constants hold data before the run; constants are loaded here.
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.kind == isa::TensorKind::Input || t.kind == isa::TensorKind::Const)
      markMemoryWritten(static_cast<int64_t>(t.address),
                        static_cast<int64_t>(t.sizeSticks));
    if (t.kind == isa::TensorKind::Const && options_.numerics && !t.data.empty())
      memory_.write(t.address * isa::kStickBytes, t.data.data(), t.data.size());
  }
}

Machine::~Machine() = default;

void Machine::markMemoryWritten(int64_t firstStick, int64_t sticks) {
  written_.add(firstStick, firstStick + sticks);
}

void Machine::push(EventKind kind, Cycle time, int core, int stream) {
  // The sequence number only orders events of one stream at one cycle; 31
  // bits of it are kept (wrapping is deterministic too).
  uint64_t seq = (seq_++ & 0x7FFFFFFFu) << 1;
  queue_.push(Event{time, orderKey(core, stream) | seq |
                              static_cast<uint64_t>(kind)});
}

std::optional<Cycle> Machine::nextEventTime() const {
  if (queue_.empty() || stopped_)
    return std::nullopt;
  return queue_.top().time;
}

void Machine::run() {
  runUntil(std::numeric_limits<Cycle>::max());
  finish();
}

void Machine::runUntil(Cycle horizon) {
  while (!stopped_ && !queue_.empty() && queue_.top().time < horizon) {
    Event e = queue_.top();
    if (options_.maxCycles != 0 && e.time > options_.maxCycles) {
      report(FindingKind::MaxCycles, nullptr, options_.maxCycles,
             "the run passed --max-cycles " +
                 std::to_string(options_.maxCycles) +
                 " with streams still running");
      stopped_ = true;
      return;
    }
    queue_.pop();
    handle(e);
  }
}

void Machine::handle(const Event &e) {
  switch (e.kind()) {
  case EventKind::Step: {
    StreamState &st = streams_[static_cast<size_t>(e.stream())];
    st.time = std::max(st.time, e.time);
    runStream(st);
    return;
  }
  case EventKind::DmaBurst: {
    StreamState &st = streams_[static_cast<size_t>(e.stream())];
    if (issueBursts(st, e.time))
      push(EventKind::Step, st.time, st.core, st.index);
    return;
  }
  }
}

void Machine::runStream(StreamState &st) {
  while (!stopped_) {
    if (st.halted || st.block != Block::None)
      return;
    if (options_.maxCycles != 0 && st.time > options_.maxCycles) {
      report(FindingKind::MaxCycles, &st, options_.maxCycles,
             "the run passed --max-cycles " +
                 std::to_string(options_.maxCycles) +
                 " with streams still running");
      stopped_ = true;
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
    if (queue_.empty() || isLocal(st.code->code[st.pc].opcode))
      continue;
    const Event &top = queue_.top();
    bool earliest = st.time < top.time ||
                    (st.time == top.time &&
                     orderKey(st.core, st.index) < (top.order & ~0xFFFFFFFFull));
    if (!earliest) {
      push(EventKind::Step, st.time, st.core, st.index);
      return;
    }
  }
}

Instr Machine::resolve(const StreamState &st, const Instr &in) const {
  Instr out = in;
  const isa::InstrDesc &d = in.desc();
  for (size_t f = 0; f < d.fields.size(); ++f)
    if (d.fields[f].isAddress()) {
      out.value[f] = st.regs[in.base[f]] + in.value[f];
      out.base[f] = 0;
    }
  return out;
}

void Machine::advancePc(StreamState &st) {
  ++st.pc;
  while (st.depth > 0 && st.pc == st.loops[st.depth - 1].end) {
    LoopFrame &lf = st.loops[st.depth - 1];
    if (--lf.remaining > 0) {
      st.pc = lf.first;
      return;
    }
    --st.depth;
  }
}

void Machine::recordSlice(StreamState &st, Cycle start, Cycle end) {
  TraceSlice &n = st.note;
  n.stream = static_cast<uint32_t>(st.index);
  n.instr = st.pc;
  n.start = start;
  n.end = end;
  n.ready = n.edge == ReleaseEdge::None ? start : std::clamp(n.ready, start, end);
  n.busy = st.stats.busyCycles - st.busyAtStart;
  n.stallCount = 0;
  for (size_t r = 0; r < st.stallAtStart.size(); ++r)
    if (Cycle c = st.stats.stallCycles[r] - st.stallAtStart[r]; c > 0) {
      SPYRE_ASSERT(n.stallCount < TraceSlice::kMaxStalls,
                   "an instruction stalled for more reasons than a slice keeps");
      n.stallReason[n.stallCount] = static_cast<StallReason>(r);
      n.stallCycles[n.stallCount] = c;
      ++n.stallCount;
    }
  trace_.push_back(n);
}

void Machine::noteFootprint(StreamState &st) {
  TraceSlice &n = st.note;
  std::vector<Cycle> &firstWrite =
      activity_.lxFirstWrite[static_cast<size_t>(st.core)];
  const auto lxSticks = static_cast<int64_t>(firstWrite.size());
  auto narrow = [](int64_t v) {
    return static_cast<int32_t>(std::clamp<int64_t>(v, 0, std::numeric_limits<int32_t>::max()));
  };
  auto widen = [&](int32_t &lo, int32_t &hi, const Region &r) {
    lo = lo < 0 ? narrow(r.lowest()) : std::min(lo, narrow(r.lowest()));
    hi = std::max(hi, narrow(r.highest()));
  };
  for (const Footprint &f : footprintScratch_) {
    if (f.deviceMemory) {
      widen(n.memLo, n.memHi, f.region);
      continue;
    }
    if (!f.write) {
      widen(n.lxReadLo, n.lxReadHi, f.region);
      continue;
    }
    widen(n.lxWriteLo, n.lxWriteHi, f.region);
    if (f.region.lowest() < 0 || f.region.highest() >= lxSticks)
      continue; // out of bounds: reported, not performed
    f.region.forEachRun([&](int64_t first, int64_t len) {
      for (int64_t k = first; k < first + len; ++k) {
        Cycle &w = firstWrite[static_cast<size_t>(k)];
        w = std::min(w, st.time);
      }
    });
  }
}

void Machine::noteRing(bool reduce, const RingTransferResult &tr, uint64_t bytes) {
  if (tr.hops == 0 || bytes == 0)
    return;
  const Ring &ring = reduce ? timing_.reduceRing() : timing_.dataRing();
  std::array<WindowCounter, 2> &counters =
      reduce ? activity_.reduceRing : activity_.dataRing;
  const Cycle duration = ring.durationCycles(bytes);
  counters[tr.direction == RingDirection::Increasing ? 0 : 1].add(
      tr.start, tr.start + duration, static_cast<uint64_t>(tr.hops) * duration);
}

void Machine::complete(StreamState &st, Cycle end) {
  if (options_.trace)
    recordSlice(st, st.instrStart, end);
  st.time = end;
  totalCycles_ = std::max(totalCycles_, end);
  advancePc(st);
}

Cycle Machine::ctrlCycles(Opcode op) const {
  if (op == Opcode::Halt)
    return 0;
  if (op == Opcode::Li || op == Opcode::Addi || op == Opcode::Lr)
    return static_cast<Cycle>(config_.sequencer.scalarCycles);
  return static_cast<Cycle>(config_.sequencer.ctrlCycles);
}

void Machine::noteProgress(const StreamState &st) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(0.0, options_.progressSeconds)));
  if (runStart_ == Clock::time_point{}) {
    runStart_ = now;
    nextProgress_ = now + interval;
    return;
  }
  if (now < nextProgress_)
    return;
  nextProgress_ = now + interval;
  options_.progress(RunProgress{
      st.time, instructions_,
      std::chrono::duration<double>(now - runStart_).count(),
      config_.chip.clockGhz});
}

bool Machine::execute(StreamState &st) {
  const Instr &in = st.code->code[st.pc];
  const FieldPos &fp = fields();
  if (options_.maxInstructions != 0 && instructions_ >= options_.maxInstructions) {
    report(FindingKind::MaxInstructions, &st, st.time,
           "the run passed its budget of " +
               std::to_string(options_.maxInstructions) + " instructions");
    stopped_ = true;
    return false;
  }
  if (options_.trace && options_.maxRecords != 0 &&
      trace_.size() >= options_.maxRecords) {
    report(FindingKind::MaxRecords, &st, st.time,
           "the run kept " + std::to_string(trace_.size()) +
               " records (" + memorySizeText(trace_.size() * sizeof(TraceSlice)) +
               "), its limit; raise --max-records, or run without --stats "
               "and --trace");
    stopped_ = true;
    return false;
  }
  ++instructions_;
  if (options_.progress && (instructions_ & 0x3FFF) == 0)
    noteProgress(st);
  ++st.stats.instructions;
  st.instrStart = st.time;
  if (options_.trace) {
    st.note = TraceSlice{};
    st.busyAtStart = st.stats.busyCycles;
    st.stallAtStart = st.stats.stallCycles;
  }
  const Opcode op = in.opcode;
  switch (op) {
  case Opcode::Nop:
    st.stats.busyCycles += ctrlCycles(op);
    complete(st, st.time + ctrlCycles(op));
    return true;
  case Opcode::Li:
    if (in[fp.liRd] != 0)
      st.regs[static_cast<size_t>(in[fp.liRd])] = in[fp.liImm];
    st.stats.busyCycles += ctrlCycles(op);
    complete(st, st.time + ctrlCycles(op));
    return true;
  case Opcode::Addi: {
    // 32-bit registers: the sum wraps modulo 2^32 as the ISA says.
    auto sum = static_cast<uint32_t>(st.regs[static_cast<size_t>(in[fp.addiRs])] +
                                     in[fp.addiImm]);
    if (in[fp.addiRd] != 0)
      st.regs[static_cast<size_t>(in[fp.addiRd])] = static_cast<int32_t>(sum);
    st.stats.busyCycles += ctrlCycles(op);
    complete(st, st.time + ctrlCycles(op));
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
    if (options_.trace)
      recordSlice(st, st.time, st.time + ctrlCycles(op));
    st.time += ctrlCycles(op);
    st.pc = first;
    return true;
  }
  case Opcode::Halt:
    st.halted = true;
    st.stats.finishedAt = st.time;
    if (options_.trace)
      recordSlice(st, st.time, st.time);
    totalCycles_ = std::max(totalCycles_, st.time);
    return false;
  case Opcode::Signal:
    doSignal(st, in);
    return true;
  case Opcode::Wait:
    return doWait(st, in);
  case Opcode::Barrier:
    return doBarrier(st, in);
  case Opcode::Host:
    doHost(st, in);
    return !stopped_;
  case Opcode::Lr:
    return doRegisterLoad(st, in);
  default:
    break;
  }

  Instr r = resolve(st, in);
  if (std::string err = operandError(r); !err.empty()) {
    report(FindingKind::InvalidOperand, &st, st.time, err);
    stopped_ = true;
    return false;
  }
  const bool dma = op == Opcode::Ld || op == Opcode::St;
  const bool ring = op == Opcode::Send || op == Opcode::Recv ||
                    op == Opcode::Rsend || op == Opcode::Racc;
  if (dma && dmaPastCycleLimit(st, r))
    return false;
  // PT and SFU: local to the core; numbers now, time from the cost model.
  const ComputeCost compute =
      dma || ring ? ComputeCost{} : computeCost(r, timing_.costs());
  if (options_.maxCycles != 0 && !dma) {
    // As for a ld/st: work that cannot end before the limit is not run, since
    // walking its rows (checks, numbers) would take the host far longer than
    // the limit allows for. PT and SFU costs are exact; a transfer cannot end
    // sooner than its ring allows even with its peer already waiting.
    const Cycle least =
        ring ? leastRingCycles(timing_, st.core, r) : compute.cycles;
    if (st.time + least > options_.maxCycles) {
      report(FindingKind::MaxCycles, &st, options_.maxCycles,
             pastCycleLimitText(options_.maxCycles, workText(r, compute),
                                least, st.time));
      stopped_ = true;
      return false;
    }
  }
  bool inBounds =
      checkAccesses(st, r, op == Opcode::Recv || op == Opcode::Racc);
  if (options_.trace)
    noteFootprint(st);
  if (dma) {
    // checkAccesses left the footprint in footprintScratch_.
    startDma(st, r, inBounds);
    if (issueBursts(st, st.time))
      return true;
    st.block = Block::Dma;
    return false;
  }
  if (ring)
    return doTransfer(st, r, inBounds);

  if (op == Opcode::Mm || op == Opcode::Mmi8)
    macOps_ += compute.work;
  st.note.work = compute.work;
  if (inBounds && options_.numerics)
    executeCompute(r, lx_[static_cast<size_t>(st.core)].data());
  st.stats.busyCycles += compute.cycles;
  complete(st, st.time + compute.cycles);
  return true;
}

// ------------------------------------------------------ bounds and races

std::string Machine::sticksText(const char *space, int64_t first,
                                int64_t last) const {
  // last + 1 in signed arithmetic wraps when a footprint reaches the
  // largest int64; the end of a range that far out is printed unsigned.
  const std::string end =
      last >= 0 ? isa::hexTextUnsigned(static_cast<uint64_t>(last) + 1)
                : isa::hexText(last + 1);
  return std::string(space) + "[" + isa::hexText(first) + ", " + end +
         ") sticks";
}

bool Machine::dmaPastCycleLimit(StreamState &st, const Instr &resolved) {
  if (options_.maxCycles == 0)
    return false;
  // A transfer cannot move its device-memory sticks faster than the memory
  // interface's peak, so one that would end past the limit is not run at
  // all: walking a descriptor of millions of runs (checks, numbers) would
  // take the host far longer than the limit allows for.
  footprintScratch_.clear();
  footprint(resolved, footprintScratch_);
  const double peakSticksPerCycle = config_.memory.peakGBps /
                                    config_.chip.clockGhz /
                                    static_cast<double>(isa::kStickBytes);
  for (const Footprint &f : footprintScratch_) {
    if (!f.deviceMemory)
      continue;
    const double least =
        static_cast<double>(f.region.sticks()) / peakSticksPerCycle;
    if (static_cast<double>(st.time) + least <=
        static_cast<double>(options_.maxCycles))
      continue;
    report(FindingKind::MaxCycles, &st, options_.maxCycles,
           "the run passed --max-cycles " +
               std::to_string(options_.maxCycles) + ": a transfer of " +
               std::to_string(f.region.sticks()) +
               " sticks cannot end before it");
    stopped_ = true;
    return true;
  }
  return false;
}

void Machine::shadowAccess(int core, const Region &r, bool write,
                           const Epoch &e) {
  // Run by run in forEachRun's order (i2 outer, i1 inner), one row of n1
  // runs per call.
  for (int64_t i2 = 0; i2 < r.n2; ++i2)
    shadow_->accessRuns(core, r.base + i2 * r.s2, r.run, r.n1, r.s1, write, e,
                        hb_, conflictScratch_);
}

bool Machine::checkAccesses(StreamState &st, const Instr &resolved,
                            bool deferLxWrites) {
  footprintScratch_.clear();
  footprint(resolved, footprintScratch_);
  const int64_t lxSticks = config_.lxSticks();
  const int64_t memSticks = config_.memory.sizeBytes / isa::kStickBytes;
  bool ok = true;
  for (const Footprint &f : footprintScratch_) {
    int64_t lo = f.region.lowest(), hi = f.region.highest();
    int64_t limit = f.deviceMemory ? memSticks : lxSticks;
    if (lo < 0 || hi >= limit) {
      report(FindingKind::OutOfBounds, &st, st.time,
             std::string(f.write ? "write" : "read") + " outside " +
                 (f.deviceMemory ? "device memory" : "LX") + " (size " +
                 isa::hexText(limit) + " sticks)",
             sticksText(f.deviceMemory ? "mem" : "lx", lo, hi));
      ok = false;
    }
  }
  if (!ok)
    return false;
  for (const Footprint &f : footprintScratch_) {
    if (!f.deviceMemory)
      lxHighWater_[static_cast<size_t>(st.core)] =
          std::max(lxHighWater_[static_cast<size_t>(st.core)],
                   f.region.highest() + 1);
  }
  if (!options_.checks)
    return true;
  for (const Footprint &f : footprintScratch_) {
    if (f.deviceMemory) {
      if (f.write) {
        f.region.forEachRun([&](int64_t start, int64_t len) {
          written_.add(start, start + len);
        });
        continue;
      }
      bool reported = false;
      f.region.forEachRun([&](int64_t start, int64_t len) {
        if (reported)
          return;
        if (auto gap = written_.firstGap(start, start + len)) {
          std::string what = "load of device memory never written";
          for (const isa::TensorDecl &t : program_.tensors)
            if (static_cast<int64_t>(t.address) <= gap->first &&
                gap->first < static_cast<int64_t>(t.address + t.sizeSticks)) {
              what += " (" + std::string(isa::tensorKindName(t.kind)) +
                      " tensor '" + t.name + "')";
              break;
            }
          report(FindingKind::MemUninitRead, &st, st.time, what,
                 sticksText("mem", gap->first, gap->second - 1));
          reported = true;
        }
      });
      continue;
    }
    // A receive's write is checked when the data arrives, after it acquired
    // the sender's clock (matchTransfers).
    if (f.write && deferLxWrites)
      continue;
    conflictScratch_.clear();
    Epoch e = hb_.epoch(st.index, st.pc);
    shadowAccess(st.core, f.region, f.write, e);
    bool raced = false, uninit = false;
    for (const AccessConflict &c : conflictScratch_) {
      if (c.kind == AccessConflict::Kind::Race && !raced) {
        raced = true;
        report(FindingKind::LxRace, &st, st.time,
               std::string(f.write ? "write" : "read") +
                   " races with an earlier " +
                   (c.otherWasWrite ? "write" : "read") +
                   " not ordered by signal/wait, barrier or program order",
               sticksText("lx", c.firstStick, c.lastStick),
               describeInstr(c.other.stream, c.other.instr));
      } else if (c.kind == AccessConflict::Kind::UninitRead && !uninit) {
        uninit = true;
        report(FindingKind::LxUninitRead, &st, st.time,
               "read of LX never written",
               sticksText("lx", c.firstStick, c.lastStick));
      }
    }
  }
  return true;
}

// -------------------------------------------------------------------- DMA

void Machine::startDma(StreamState &st, const Instr &resolved, bool inBounds) {
  DmaState &d = st.dma;
  d.inFlight.clear(); // keeps its storage
  d.memRegion = d.lxRegion = Region{};
  d.i1 = d.i2 = d.runOffset = 0;
  d.lastMemWait = d.lastRingWait = d.slotWait = 0;
  d.isLoad = resolved.opcode == Opcode::Ld;
  for (const Footprint &f : footprintScratch_)
    (f.deviceMemory ? d.memRegion : d.lxRegion) = f.region;
  // A port that carries data moves the bytes burst by burst instead.
  if (inBounds && options_.numerics && !port_->carriesData()) {
    uint8_t *lx = lx_[static_cast<size_t>(st.core)].data();
    if (d.isLoad)
      executeLoad(resolved, memory_, lx);
    else
      executeStore(resolved, lx, memory_);
  }
  uint64_t bytes =
      inBounds ? static_cast<uint64_t>(d.memRegion.sticks()) * isa::kStickBytes
               : 0;
  (d.isLoad ? dramRead_ : dramWrite_) += bytes;
  d.bytes = bytes;
  st.note.bytes = bytes;
  d.issueAt = st.time;
  d.nextBurstAt = st.time + timing_.costs().dmaIssueLatencyCycles();
  d.done = d.nextBurstAt;
  if (!inBounds || bytes == 0)
    d.i2 = d.memRegion.n2; // nothing to move
}

bool Machine::issueBursts(StreamState &st, Cycle now) {
  DmaState &d = st.dma;
  const Region &r = d.memRegion;
  const auto maxOut = static_cast<size_t>(timing_.costs().dmaMaxOutstanding());
  const int64_t burstSticks =
      std::max<int64_t>(1, config_.dma.burstBytes / isa::kStickBytes);
  while (d.i2 < r.n2) {
    // Bursts reach the memory interface in the order they are processed, so
    // one that must wait for a free slot waits for its time in the queue.
    Cycle t = d.nextBurstAt;
    if (d.inFlight.size() >= maxOut) {
      Cycle slot = d.inFlight.front();
      if (slot > now) {
        push(EventKind::DmaBurst, slot, st.core, st.index);
        return false;
      }
      d.inFlight.pop_front();
      if (slot > t) {
        d.slotWait += slot - t;
        t = slot;
      }
    }
    int64_t runStart = r.base + d.i2 * r.s2 + d.i1 * r.s1;
    int64_t len = std::min(burstSticks, r.run - d.runOffset);
    bool newRun = d.runOffset == 0;
    uint64_t addr =
        static_cast<uint64_t>(runStart + d.runOffset) * isa::kStickBytes;
    uint8_t *data = nullptr;
    if (options_.numerics && port_->carriesData()) {
      const Region &x = d.lxRegion;
      data = lx_[static_cast<size_t>(st.core)].data() +
             (x.base + d.i2 * x.s2 + d.i1 * x.s1 + d.runOffset) *
                 isa::kStickBytes;
    }
    DmaRunTiming timing = port_->dmaBurst(
        t, st.core, addr, static_cast<uint64_t>(len) * isa::kStickBytes,
        d.isLoad ? Direction::Read : Direction::Write, newRun, data);
    if (timing.done >= d.done) {
      d.lastMemWait = timing.memory.waited;
      d.lastRingWait = timing.ring.waited;
    }
    d.done = std::max(d.done, timing.done);
    d.inFlight.push_back(timing.done);
    if (options_.trace) {
      const uint64_t burstBytes = static_cast<uint64_t>(len) * isa::kStickBytes;
      const MemoryChannel &mem = timing_.memory();
      const Cycle moved = timing.memory.dataDone > timing.memory.start + mem.latencyCycles()
                              ? timing.memory.dataDone - mem.latencyCycles()
                              : timing.memory.start + 1;
      (d.isLoad ? activity_.memoryRead : activity_.memoryWrite)
          .add(timing.memory.start, moved, burstBytes);
      noteRing(false, timing.ring, burstBytes);
    }
    d.runOffset += len;
    if (d.runOffset >= r.run) {
      d.runOffset = 0;
      if (++d.i1 >= r.n1) {
        d.i1 = 0;
        ++d.i2;
      }
    }
    d.nextBurstAt = t;
  }
  finishDma(st);
  return true;
}

void Machine::finishDma(StreamState &st) {
  DmaState &d = st.dma;
  Cycle end = std::max(d.done, d.nextBurstAt);
  Cycle duration = end - d.issueAt;
  // Stalls are the waiting that delayed completion: the engine's waits for a
  // free burst slot (sequential on its issue timeline), and the memory and
  // ring queueing of the burst that finished last. The rest is busy:
  // transfer, latency and setup.
  std::array<Cycle, kNumStallReasons> stall{};
  stall[static_cast<size_t>(StallReason::DmaSlots)] = d.slotWait;
  stall[static_cast<size_t>(StallReason::Memory)] = d.lastMemWait;
  stall[static_cast<size_t>(StallReason::Ring)] = d.lastRingWait;
  Cycle stalled = 0;
  for (Cycle &c : stall) {
    c = std::min(c, duration - stalled);
    stalled += c;
  }
  for (size_t r = 0; r < stall.size(); ++r)
    st.stats.stallCycles[r] += stall[r];
  st.stats.busyCycles += duration - stalled;
  st.block = Block::None;
  complete(st, end);
}

// ------------------------------------------------------------ sync

int Machine::hops(int coreA, int coreB) const {
  const Ring &ring = timing_.dataRing();
  int pa = ring.positionOf(RingNode::core(coreA));
  int pb = ring.positionOf(RingNode::core(coreB));
  int d = std::abs(pa - pb);
  return std::min(d, ring.positions() - d);
}

Cycle Machine::signalLatency(int fromCore, int toCore) const {
  Cycle local = static_cast<Cycle>(config_.sequencer.syncCycles);
  if (fromCore == toCore)
    return local;
  return local + static_cast<Cycle>(hops(fromCore, toCore)) *
                     timing_.dataRing().hopLatencyCycles();
}

Cycle Machine::barrierLatency() const {
  // Arrivals gather at one point of the ring and the release travels back:
  // twice the farthest distance on the ring.
  const Ring &ring = timing_.dataRing();
  return static_cast<Cycle>(config_.sequencer.syncCycles) +
         2 * static_cast<Cycle>(ring.positions() / 2) * ring.hopLatencyCycles();
}

VectorClock Machine::takeClock(int stream) {
  // Signals happen often; their clocks are recycled once their tokens are
  // taken, so checking does not allocate per signal.
  VectorClock vc;
  if (!clockPool_.empty()) {
    vc = std::move(clockPool_.back());
    clockPool_.pop_back();
  }
  hb_.releaseInto(stream, vc);
  return vc;
}

Machine::Counter &Machine::counterOf(int core, int counter) {
  return counters_[static_cast<size_t>(core) *
                       static_cast<size_t>(config_.limits.syncCountersPerCore) +
                   static_cast<size_t>(counter)];
}

Machine::Release Machine::takeTokens(Counter &c, int64_t need, int stream) {
  // Tokens are ordered by the cycle they become visible, so taking from the
  // front takes the earliest; the wait completes when the last one it takes
  // has arrived, and that token's signal is what released it.
  c.available -= need;
  Release last;
  while (need > 0) {
    Token &tok = c.tokens.front();
    if (options_.checks)
      hb_.acquire(stream, tok.clock);
    if (tok.visibleAt >= last.visible)
      last = {tok.visibleAt, tok.core, tok.slice};
    int64_t take = std::min(need, tok.amount);
    tok.amount -= take;
    need -= take;
    if (tok.amount == 0) {
      if (!tok.clock.empty())
        clockPool_.push_back(std::move(tok.clock));
      c.tokens.pop_front();
    }
  }
  return last;
}

void Machine::doSignal(StreamState &st, const Instr &in) {
  const FieldPos &fp = fields();
  int target = in[fp.sigCore] == isa::kCoreSelf
                   ? st.core
                   : static_cast<int>(in[fp.sigCore]);
  Counter &c = counterOf(target, static_cast<int>(in[fp.sigCounter]));
  // The token is recorded now, stamped with the cycle it reaches the
  // counter; nothing can observe it earlier, because a wait completes no
  // sooner than the tokens it takes are visible.
  // The signal's own slice is the next one recorded (by complete below).
  Token tok{in[fp.sigValue], {}, st.time + signalLatency(st.core, target), st.core,
            options_.trace ? static_cast<int64_t>(trace_.size()) : -1};
  if (options_.checks)
    tok.clock = takeClock(st.index);
  c.tokens.insertSorted(std::move(tok), [](const Token &a, const Token &b) {
    return a.visibleAt < b.visibleAt;
  });
  c.available += in[fp.sigValue];
  Cycle cost = static_cast<Cycle>(config_.sequencer.syncCycles);
  st.stats.busyCycles += cost;
  complete(st, st.time + cost);
  // Wake waiters in the order they blocked, while the counter covers them.
  while (!c.waiters.empty()) {
    StreamState &w = streams_[static_cast<size_t>(c.waiters.front())];
    if (c.available < w.waitValue)
      return;
    c.waiters.pop_front();
    wake(w, takeTokens(c, w.waitValue, w.index));
  }
}

bool Machine::doWait(StreamState &st, const Instr &in) {
  const FieldPos &fp = fields();
  int counter = static_cast<int>(in[fp.waitCounter]);
  int64_t value = in[fp.waitValue];
  Counter &c = counterOf(st.core, counter);
  if (c.waiters.empty() && c.available >= value) {
    Release rel = takeTokens(c, value, st.index);
    st.blockedSince = st.time;
    if (rel.visible > st.time) {
      st.stats.stallCycles[static_cast<size_t>(waitReason(st, rel))] +=
          rel.visible - st.time;
      st.time = rel.visible;
      st.note.ready = rel.visible;
      st.note.releasedBy = rel.slice;
      st.note.edge = ReleaseEdge::Signal;
    }
    Cycle cost = static_cast<Cycle>(config_.sequencer.syncCycles);
    st.stats.busyCycles += cost;
    complete(st, st.time + cost);
    return true;
  }
  st.block = Block::Counter;
  st.blockedSince = st.time;
  st.waitCounter = counter;
  st.waitValue = value;
  c.waiters.push_back(st.index);
  return false;
}

void Machine::wake(StreamState &st, const Release &release) {
  Cycle at = std::max(release.visible, st.time);
  st.stats.stallCycles[static_cast<size_t>(waitReason(st, release))] +=
      at - st.blockedSince;
  if (at > st.blockedSince) {
    st.note.ready = at;
    st.note.releasedBy = release.slice;
    st.note.edge = ReleaseEdge::Signal;
  }
  Cycle cost = static_cast<Cycle>(config_.sequencer.syncCycles);
  st.stats.busyCycles += cost;
  st.block = Block::None;
  st.time = at;
  complete(st, at + cost);
  push(EventKind::Step, st.time, st.core, st.index);
}

bool Machine::doBarrier(StreamState &st, const Instr &in) {
  const FieldPos &fp = fields();
  auto id = static_cast<size_t>(in[fp.barId]);
  int64_t count = in[fp.barCount];
  BarrierState &b = barriers_[id];
  if (options_.checks) {
    VectorClock vc = hb_.release(st.index);
    if (b.joined.empty())
      b.joined = vc;
    else
      joinInto(b.joined, vc);
  }
  b.arrived.push_back(st.index);
  b.lastArrival = std::max(b.lastArrival, st.time);
  st.block = Block::Barrier;
  st.blockedSince = st.time;
  st.waitBarrier = static_cast<int>(id);
  st.waitValue = count;
  if (static_cast<int64_t>(b.arrived.size()) < count)
    return false;
  Cycle release = b.lastArrival + barrierLatency();
  const Cycle lastArrival = b.lastArrival;
  std::vector<int> arrived = std::move(b.arrived);
  VectorClock joined = std::move(b.joined);
  b = BarrierState{};
  // The slices are recorded in arrival order below; the first stream that
  // arrived at the last arrival's cycle is the one that released the others.
  const auto firstSlice = static_cast<int64_t>(trace_.size());
  int64_t lastSlice = -1;
  for (size_t k = 0; k < arrived.size() && lastSlice < 0; ++k)
    if (streams_[static_cast<size_t>(arrived[k])].blockedSince == lastArrival)
      lastSlice = firstSlice + static_cast<int64_t>(k);
  for (int s : arrived) {
    StreamState &w = streams_[static_cast<size_t>(s)];
    if (options_.checks)
      hb_.acquire(s, joined);
    w.stats.stallCycles[static_cast<size_t>(StallReason::Barrier)] +=
        release - w.blockedSince;
    if (options_.trace && w.blockedSince < lastArrival) {
      w.note.ready = lastArrival;
      w.note.releasedBy = lastSlice;
      w.note.edge = ReleaseEdge::Barrier;
    }
    w.block = Block::None;
    w.time = release;
    complete(w, release);
    push(EventKind::Step, w.time, w.core, w.index);
  }
  return false;
}

// --------------------------------------------------------- ring transfers

bool Machine::doTransfer(StreamState &st, const Instr &r, bool inBounds) {
  const FieldPos &fp = fields();
  const Opcode op = r.opcode;
  int peer = static_cast<int>(r[fp.ringCore]);
  bool reduce = op == Opcode::Rsend || op == Opcode::Racc;
  bool sending = op == Opcode::Send || op == Opcode::Rsend;
  footprintScratch_.clear();
  footprint(r, footprintScratch_);
  SPYRE_ASSERT(!footprintScratch_.empty(), "ring instruction without a region");
  TransferPost post{st.index, st.time, footprintScratch_.front().region, {},
                    inBounds};
  if (sending && options_.checks)
    post.clock = hb_.release(st.index);
  int src = sending ? st.core : peer, dst = sending ? peer : st.core;
  Channel &ch = channels_[{reduce, src, dst}];
  (sending ? ch.sends : ch.recvs).push_back(std::move(post));
  st.block = Block::Transfer;
  st.blockedSince = st.time;
  st.peerCore = peer;
  st.reduceRing = reduce;
  matchTransfers(ch, reduce, src, dst);
  return false;
}

void Machine::matchTransfers(Channel &ch, bool reduce, int srcCore, int dstCore) {
  while (!ch.sends.empty() && !ch.recvs.empty()) {
    TransferPost s = std::move(ch.sends.front());
    TransferPost r = std::move(ch.recvs.front());
    ch.sends.pop_front();
    ch.recvs.pop_front();
    StreamState &sender = streams_[static_cast<size_t>(s.stream)];
    StreamState &receiver = streams_[static_cast<size_t>(r.stream)];
    int64_t sendSticks = s.region.sticks(), recvSticks = r.region.sticks();
    if (sendSticks != recvSticks)
      report(FindingKind::TransferMismatch, &receiver, std::max(s.time, r.time),
             "receives " + std::to_string(recvSticks) + " sticks but the matching " +
                 describeInstr(s.stream, sender.pc) + " sends " +
                 std::to_string(sendSticks));
    int64_t sticks = std::min(sendSticks, recvSticks);
    Cycle start = std::max(s.time, r.time);
    Ring &ring = reduce ? timing_.reduceRing() : timing_.dataRing();
    RingTransferResult tr =
        ring.transfer(start, RingNode::core(srcCore), RingNode::core(dstCore),
                      static_cast<uint64_t>(sticks) * isa::kStickBytes);
    if (options_.checks)
      hb_.acquire(r.stream, s.clock);
    // An end outside LX was reported when it was issued: the transfer
    // still takes its time but moves and checks no data.
    const bool inBounds = s.inBounds && r.inBounds;
    if (options_.numerics && inBounds && sendSticks == recvSticks) {
      std::string payload =
          gather(s.region, lx_[static_cast<size_t>(srcCore)].data());
      uint8_t *lx = lx_[static_cast<size_t>(dstCore)].data();
      if (reduce)
        accumulateF32(r.region, payload, lx);
      else
        scatter(r.region, payload, lx);
    }
    // The receiver's LX write is checked after it acquired the sender's clock.
    if (options_.checks && inBounds) {
      conflictScratch_.clear();
      Epoch e = hb_.epoch(r.stream, receiver.pc);
      shadowAccess(dstCore, r.region, true, e);
      for (const AccessConflict &c : conflictScratch_)
        if (c.kind == AccessConflict::Kind::Race) {
          report(FindingKind::LxRace, &receiver, start,
                 "received data races with an earlier access not ordered by "
                 "signal/wait, barrier or program order",
                 sticksText("lx", c.firstStick, c.lastStick),
                 describeInstr(c.other.stream, c.other.instr));
          break;
        }
    }
    // The sender's slice is recorded first, then the receiver's; the side
    // posted first was released by the other's posting.
    const auto senderSlice = static_cast<int64_t>(trace_.size());
    const uint64_t bytes = static_cast<uint64_t>(sticks) * isa::kStickBytes;
    if (options_.trace) {
      noteRing(reduce, tr, bytes);
      receiver.note.partner = senderSlice;
      if (s.time < start) {
        sender.note.ready = start;
        sender.note.releasedBy = senderSlice + 1;
        sender.note.edge = ReleaseEdge::Transfer;
      }
      if (r.time < start) {
        receiver.note.ready = start;
        receiver.note.releasedBy = senderSlice;
        receiver.note.edge = ReleaseEdge::Transfer;
      }
    }
    for (auto [stp, post] : {std::pair{&sender, &s}, std::pair{&receiver, &r}}) {
      StreamState &w = *stp;
      Cycle sync = start - post->time;
      w.note.bytes = bytes;
      w.stats.stallCycles[static_cast<size_t>(StallReason::Peer)] += sync;
      w.stats.stallCycles[static_cast<size_t>(StallReason::Ring)] += tr.waited;
      w.stats.busyCycles += tr.done - tr.start;
      w.block = Block::None;
      complete(w, tr.done);
      push(EventKind::Step, w.time, w.core, w.index);
    }
  }
}

// ----------------------------------------------------------- end of run

void Machine::finish() {
  if (finished_)
    return;
  finished_ = true;
  for (StreamState &st : streams_) {
    if (st.halted)
      continue;
    st.stats.finishedAt = st.time;
    if (stopped_)
      continue; // a limit stopped the run: not a deadlock
    std::string what;
    switch (st.block) {
    case Block::Counter: {
      const Counter &c = counterOf(st.core, st.waitCounter);
      what = "waits forever for counter c" + std::to_string(st.waitCounter) +
             " of core " + std::to_string(st.core) + " to reach " +
             std::to_string(st.waitValue) + " (it holds " +
             std::to_string(c.available) + ")";
      break;
    }
    case Block::Barrier:
      what = "waits forever at barrier " + std::to_string(st.waitBarrier) +
             " for " + std::to_string(st.waitValue) + " streams (" +
             std::to_string(barriers_[static_cast<size_t>(st.waitBarrier)]
                                .arrived.size()) +
             " arrived)";
      break;
    case Block::Transfer:
      what = std::string("waits forever for a matching ") +
             (st.code->code[st.pc].opcode == Opcode::Send ||
                      st.code->code[st.pc].opcode == Opcode::Rsend
                  ? "receive on core "
                  : "send from core ") +
             std::to_string(st.peerCore);
      break;
    default:
      what = "stopped before its halt";
      break;
    }
    report(FindingKind::Deadlock, &st, st.time, what);
    // The blocked instruction waited until the end of the run: sync stall,
    // and a trace slice so the trace shows where it hangs.
    Cycle endOfRun = std::max(totalCycles_, st.blockedSince);
    st.stats.stallCycles[static_cast<size_t>(StallReason::Deadlock)] +=
        endOfRun - st.blockedSince;
    if (options_.trace)
      recordSlice(st, st.instrStart, endOfRun);
  }
}

// ------------------------------------------------------------ host ops

bool Machine::doRegisterLoad(StreamState &st, const Instr &in) {
  const Instr r = resolve(st, in);
  // The stick read is checked like any LX read (bounds, races, reads of
  // bytes never written).
  if (!checkAccesses(st, r, false)) {
    stopped_ = true;
    return false;
  }
  if (options_.trace)
    noteFootprint(st);
  // Timing-only runs hold no LX contents: the index reads as 0, which only
  // moves the addresses it feeds.
  int32_t value = 0;
  if (options_.numerics)
    std::memcpy(&value,
                lx_[static_cast<size_t>(st.core)].data() +
                    r[isa::Field::Lx] * isa::kStickBytes +
                    r[isa::Field::Lane] * int64_t{4},
                sizeof value);
  const int64_t limit = r[isa::Field::Limit];
  if (value < 0 || value >= limit) {
    report(FindingKind::IndexOutOfRange, &st, st.time,
           "index " + std::to_string(value) + " (lane " +
               std::to_string(r[isa::Field::Lane]) + ") is outside [0, " +
               std::to_string(limit) + ")",
           sticksText("lx", r[isa::Field::Lx], r[isa::Field::Lx]));
    stopped_ = true;
    return false;
  }
  if (const int64_t rd = r[isa::Field::Rd]; rd != 0)
    st.regs[static_cast<size_t>(rd)] = value;
  st.stats.busyCycles += ctrlCycles(Opcode::Lr);
  complete(st, st.time + ctrlCycles(Opcode::Lr));
  return true;
}

void Machine::doHost(StreamState &st, const Instr &in) {
  const auto index = static_cast<uint32_t>(in[fields().hostOp]);
  SPYRE_ASSERT(index < program_.hostOps.size(),
               "host op index past the HOST section; loading checks it");
  const isa::HostOpDecl &h = program_.hostOps[index];
  auto bytesOf = [&](const std::vector<uint32_t> &tensors) {
    uint64_t n = 0;
    for (uint32_t t : tensors)
      n += program_.tensors[t].sizeSticks * isa::kStickBytes;
    return n;
  };
  HostRun run;
  run.op = index;
  run.stream = static_cast<uint32_t>(st.index);
  run.bytesToHost = bytesOf(h.inputs);
  run.bytesFromHost = bytesOf(h.outputs);
  const HostTiming timing =
      hostOpTiming(config_, run.bytesToHost, h.flops, run.bytesFromHost);
  const Cycle duration = timing.toHost + timing.compute + timing.fromHost;
  if (options_.maxCycles != 0 && st.time + duration > options_.maxCycles) {
    // As for device work: its cycles are known before the host computes
    // anything, and an op that cannot end before the limit is not run.
    report(FindingKind::MaxCycles, &st, options_.maxCycles,
           pastCycleLimitText(options_.maxCycles, "host op '" + h.name + "'",
                              duration, st.time));
    stopped_ = true;
    return;
  }
  if (options_.checks)
    for (uint32_t t : h.inputs) {
      const isa::TensorDecl &d = program_.tensors[t];
      const auto first = static_cast<int64_t>(d.address);
      const auto last = first + static_cast<int64_t>(d.sizeSticks);
      if (auto gap = written_.firstGap(first, last)) {
        report(FindingKind::MemUninitRead, &st, st.time,
               "host op '" + h.name + "' reads device memory never written (" +
                   std::string(isa::tensorKindName(d.kind)) + " tensor '" +
                   d.name + "')",
               sticksText("mem", gap->first, gap->second - 1));
        break;
      }
    }
  for (uint32_t t : h.outputs)
    markMemoryWritten(static_cast<int64_t>(program_.tensors[t].address),
                      static_cast<int64_t>(program_.tensors[t].sizeSticks));
  if (options_.numerics) {
    std::string why;
    std::optional<nlohmann::json> attrs = host::parseHostAttrs(h.attrs, why);
    SPYRE_ASSERT(attrs, "host op attributes were checked at loading: " + why);
    std::vector<host::HostTensor> inputs;
    for (uint32_t t : h.inputs) {
      const isa::TensorDecl &d = program_.tensors[t];
      inputs.push_back({d.hostShape, readTensorValues(d, memory_)});
    }
    std::vector<host::HostTensor> outputs =
        host::runHostOp({h.opType, std::move(*attrs)}, inputs);
    for (size_t k = 0; k < outputs.size(); ++k)
      writeTensorValues(program_.tensors[h.outputs[k]], outputs[k].data, memory_);
  }
  run.start = st.time;
  run.toHostEnd = run.start + timing.toHost;
  run.computeEnd = run.toHostEnd + timing.compute;
  run.end = run.computeEnd + timing.fromHost;
  st.note.bytes = run.bytesToHost + run.bytesFromHost;
  st.note.work = h.flops;
  if (options_.trace)
    run.slice = static_cast<int64_t>(trace_.size());
  hostRuns_.push_back(run);
  st.stats.busyCycles += run.end - run.start;
  complete(st, run.end);
}

// ----------------------------------------------------------- findings

std::string Machine::describeInstr(int stream, uint32_t instr) const {
  const isa::Stream &s = program_.streams[static_cast<size_t>(stream)];
  std::string out = s.name() + " #" + std::to_string(instr);
  if (instr < s.code.size()) {
    out += " (" + isa::formatInstr(s.code[instr]) + ")";
    if (const std::string *op = program_.provenanceOf(s, instr))
      out += " [op " + *op + "]";
  }
  return out;
}

void Machine::report(FindingKind kind, const StreamState *st, Cycle cycle,
                     std::string message, std::string range,
                     std::string conflicting) {
  // Keep the report readable: a broken loop could produce millions.
  constexpr size_t kMaxFindings = 1000;
  if (findings_.size() >= kMaxFindings) {
    ++findingsDropped_;
    return;
  }
  Finding f;
  f.kind = kind;
  f.cycle = cycle;
  if (st) {
    f.core = st->core;
    f.stream = st->code->name();
    f.instrIndex = st->pc;
    if (st->pc < st->code->code.size()) {
      f.instrText = isa::formatInstr(st->code->code[st->pc]);
      if (const std::string *op = program_.provenanceOf(*st->code, st->pc))
        f.sourceOp = *op;
    }
  }
  f.message = std::move(message);
  f.addressRange = std::move(range);
  f.conflicting = std::move(conflicting);
  findings_.push_back(std::move(f));
}

} // namespace spyre::sim
