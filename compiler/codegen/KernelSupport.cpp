// Kernel building blocks (KernelSupport.h).
#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::codegen {

Resources resources(const hw::HwConfig &config, const KernelOptions &opt) {
  Resources r;
  r.firstCore = opt.firstCore;
  r.cores = opt.cores > 0 ? opt.cores : config.chip.cores - opt.firstCore;
  SPYRE_ASSERT(r.firstCore >= 0 && r.cores >= 1 &&
                   r.firstCore + r.cores <= config.chip.cores,
               "cores " + std::to_string(r.firstCore) + ".." +
                   std::to_string(r.firstCore + r.cores - 1) +
                   " are not all on the chip");
  r.units = opt.units > 0 ? opt.units : config.chip.coreletsPerCore;
  SPYRE_ASSERT(r.units <= config.chip.coreletsPerCore,
               std::to_string(r.units) +
                   " units per core requested, the chip has " +
                   std::to_string(config.chip.coreletsPerCore));
  r.buffers = opt.overlap ? 2 : 1;
  r.lxBase = opt.lxBase;
  r.lxEnd = opt.lxSticks > 0 ? opt.lxBase + opt.lxSticks : config.lxSticks();
  SPYRE_ASSERT(r.lxBase >= 0 && r.lxBase < r.lxEnd &&
                   r.lxEnd <= config.lxSticks(),
               "LX region [" + std::to_string(r.lxBase) + ", " +
                   std::to_string(r.lxEnd) + ") is not inside LX");
  return r;
}

int64_t LxArena::take(int64_t sticks) {
  SPYRE_ASSERT(sticks >= 0, "negative LX request");
  int64_t at = next_;
  next_ += sticks;
  SPYRE_ASSERT(next_ <= end_,
               what_ + ": LX working set of " + std::to_string(next_) +
                   " sticks does not fit below " + std::to_string(end_));
  return at;
}

std::vector<int64_t> LxArena::takeEach(int n, int64_t sticks) {
  std::vector<int64_t> at;
  for (int i = 0; i < n; ++i)
    at.push_back(take(sticks));
  return at;
}

std::pair<int64_t, int64_t> splitRange(int64_t n, int64_t parts, int64_t i) {
  SPYRE_ASSERT(parts >= 1 && i >= 0 && i < parts, "bad split");
  int64_t base = n / parts, extra = n % parts;
  int64_t begin = i * base + std::min(i, extra);
  return {begin, begin + base + (i < extra ? 1 : 0)};
}

// ------------------------------------------------------------ BufferRing

BufferRing::BufferRing(ProgramBuilder &pb, int core, std::vector<int64_t> slots,
                       std::vector<std::vector<StreamBuilder *>> stages)
    : pb_(pb), core_(core), slots_(std::move(slots)),
      stages_(std::move(stages)) {
  SPYRE_ASSERT(slots_.size() == 1 || slots_.size() == 2,
               "a ring has one or two buffers");
  SPYRE_ASSERT(stages_.size() >= 2, "a ring needs a producer and a consumer");
  for (size_t s = 0; s < stages_.size(); ++s) {
    SPYRE_ASSERT(!stages_[s].empty(), "empty ring stage");
    for (StreamBuilder *m : stages_[s]) {
      SPYRE_ASSERT(m->core() == core, "ring member on another core");
      SPYRE_ASSERT(members_.count(m) == 0, m->name() + " twice in a ring");
      members_[m].stage = static_cast<int>(s);
    }
  }
  // In stage order, never in pointer order: counter numbers must not
  // depend on where the streams happen to live in memory.
  for (const auto &stage : stages_)
    for (StreamBuilder *s : stage) {
      Member &m = members_.at(s);
      for (StreamBuilder *p : before(m))
        m.from[p] = pb_.allocCounter(core);
    }
}

const std::vector<StreamBuilder *> &BufferRing::before(const Member &m) const {
  return m.stage == 0 ? stages_.back()
                      : stages_[static_cast<size_t>(m.stage - 1)];
}

const std::vector<StreamBuilder *> &BufferRing::after(const Member &m) const {
  return static_cast<size_t>(m.stage) + 1 == stages_.size()
             ? stages_.front()
             : stages_[static_cast<size_t>(m.stage) + 1];
}

BufferRing::Member &BufferRing::member(StreamBuilder &s) {
  auto it = members_.find(&s);
  SPYRE_ASSERT(it != members_.end(), s.name() + " is not in this ring");
  return it->second;
}

const BufferRing::Member &BufferRing::member(StreamBuilder &s) const {
  auto it = members_.find(&s);
  SPYRE_ASSERT(it != members_.end(), s.name() + " is not in this ring");
  return it->second;
}

void BufferRing::open(StreamBuilder &s) {
  Member &m = member(s);
  m.cur = s.allocReg();
  s.li(m.cur, slots_[0]);
  if (slots_.size() == 2) {
    m.other = s.allocReg();
    s.li(m.other, slots_[1]);
  }
  if (m.stage == 0)
    for (StreamBuilder *p : before(m))
      s.signal(m.from.at(p), static_cast<int64_t>(slots_.size()));
}

void BufferRing::acquire(StreamBuilder &s) {
  const Member &m = member(s);
  for (StreamBuilder *p : before(m))
    s.wait(m.from.at(p), 1);
}

void BufferRing::release(StreamBuilder &s) {
  post(s);
  advance(s);
}

void BufferRing::post(StreamBuilder &s) {
  const Member &m = member(s);
  for (StreamBuilder *n : after(m))
    s.signal(members_.at(n).from.at(&s), 1);
}

void BufferRing::advance(StreamBuilder &s) {
  const Member &m = member(s);
  if (slots_.size() == 2) {
    int tmp = s.allocReg();
    s.mov(tmp, m.cur);
    s.mov(m.cur, m.other);
    s.mov(m.other, tmp);
    s.freeReg(tmp);
  }
}

Addr BufferRing::slot(StreamBuilder &s) const { return {member(s).cur, 0}; }

Addr BufferRing::released(StreamBuilder &s) const {
  const Member &m = member(s);
  return {slots_.size() == 2 ? m.other : m.cur, 0};
}

void BufferRing::close(StreamBuilder &s) {
  Member &m = member(s);
  if (m.stage == 0)
    for (StreamBuilder *p : before(m))
      s.wait(m.from.at(p), static_cast<int64_t>(slots_.size()));
  s.freeReg(m.cur);
  if (slots_.size() == 2)
    s.freeReg(m.other);
}

void BufferRing::finish() {
  for (const auto &stage : stages_)
    for (StreamBuilder *s : stage)
      for (StreamBuilder *p : before(members_.at(s)))
        pb_.releaseCounter(core_, members_.at(s).from.at(p));
  members_.clear();
}

// ------------------------------------------------------------ OnceSignal

OnceSignal::OnceSignal(ProgramBuilder &pb, int core,
                       std::vector<StreamBuilder *> consumers)
    : pb_(pb), core_(core) {
  for (StreamBuilder *c : consumers)
    counters_.emplace_back(c, pb.allocCounter(core));
}

void OnceSignal::post(StreamBuilder &producer) {
  for (const auto &[c, counter] : counters_)
    producer.signal(counter, 1);
}

void OnceSignal::await(StreamBuilder &consumer) {
  for (const auto &[c, counter] : counters_)
    if (c == &consumer) {
      consumer.wait(counter, 1);
      return;
    }
  SPYRE_UNREACHABLE(consumer.name() + " does not wait for this signal");
}

void OnceSignal::finish() {
  for (const auto &[c, counter] : counters_)
    pb_.releaseCounter(core_, counter);
  counters_.clear();
}

// -------------------------------------------------------------- emitNest

namespace {

class NestEmitter {
public:
  NestEmitter(StreamBuilder &s, const std::vector<NestLevel> &levels,
              const std::vector<NestReg> &regs, const NestHooks &hooks,
              int64_t maxLoop)
      : s_(s), levels_(levels), regs_(regs), hooks_(hooks), maxLoop_(maxLoop) {
    iter_.tail.assign(levels.size(), false);
    iter_.first.assign(levels.size(), false);
  }

  void level(size_t l) {
    const NestLevel &lv = levels_[l];
    SPYRE_ASSERT(lv.tiles >= 1, "nest level without iterations");
    int64_t remaining = lv.tiles;
    if (lv.peelFirst) {
      iteration(l, true, lv.hasTail && lv.tiles == 1);
      --remaining;
    }
    int64_t full = remaining - (lv.hasTail && remaining > 0 ? 1 : 0);
    if (lv.unroll) {
      for (; full > 0; --full)
        iteration(l, false, false);
    }
    while (full > 0) {
      int64_t n = std::min(full, maxLoop_);
      if (n >= 2)
        s_.beginLoop(n);
      iteration(l, false, false);
      if (n >= 2)
        s_.endLoop();
      full -= n;
    }
    if (lv.hasTail && remaining > 0)
      iteration(l, false, true);
  }

private:
  void iteration(size_t l, bool first, bool tail) {
    iter_.first[l] = first;
    iter_.tail[l] = tail;
    if (hooks_.enter)
      hooks_.enter(static_cast<int>(l), iter_);
    if (l + 1 < levels_.size())
      level(l + 1);
    else if (hooks_.body)
      hooks_.body(iter_);
    if (hooks_.leave)
      hooks_.leave(static_cast<int>(l), iter_);
    // Move to the next iteration of this level, net of what the inner
    // level added over all of its iterations. A level of one iteration has
    // no next one: it steps by nothing.
    auto step = [&](const NestReg &r, size_t lv) {
      return levels_[lv].tiles > 1 ? r.step[lv] : 0;
    };
    for (const NestReg &r : regs_) {
      int64_t d = step(r, l);
      if (l + 1 < levels_.size())
        d -= levels_[l + 1].tiles * step(r, l + 1);
      // addi takes a signed 24-bit immediate; larger steps (tensors past
      // 1 GiB) take several.
      constexpr int64_t kMaxImm = (int64_t(1) << 23) - 1;
      while (d != 0) {
        int64_t part = std::clamp(d, -kMaxImm, kMaxImm);
        s_.addi(r.reg, r.reg, part);
        d -= part;
      }
    }
  }

  StreamBuilder &s_;
  const std::vector<NestLevel> &levels_;
  const std::vector<NestReg> &regs_;
  const NestHooks &hooks_;
  int64_t maxLoop_;
  NestIter iter_;
};

} // namespace

void emitNest(StreamBuilder &s, const std::vector<NestLevel> &levels,
              const std::vector<NestReg> &regs, const NestHooks &hooks,
              int64_t maxLoopCount) {
  for (const NestReg &r : regs)
    SPYRE_ASSERT(r.step.size() == levels.size(), "nest register steps");
  if (levels.empty()) {
    if (hooks.body)
      hooks.body(NestIter{});
    return;
  }
  NestEmitter(s, levels, regs, hooks, maxLoopCount).level(0);
}

// ---------------------------------------------------------- instructions

namespace {

/// The DMA fields of a move, from the point of view of memory (ms) and LX
/// (lxs). Rows contiguous in memory: one run per block. Otherwise one stick
/// per run, rows in dimension 1 and blocks in dimension 2.
template <isa::Format F> void setMove(InstrOf<F> &b, const StickMove &mv) {
  SPYRE_ASSERT(mv.rows >= 1 && mv.blocks >= 1, "empty DMA move");
  if (mv.rows == 1 && mv.blockStride == 1 && mv.lxBlockStride == 1) {
    b.run(mv.blocks);
    return;
  }
  if (mv.rowStride == 1) {
    b.run(mv.rows);
    if (mv.blocks > 1)
      b.n1(mv.blocks).lxs1(mv.lxBlockStride).ms1(mv.blockStride);
    return;
  }
  b.run(1);
  if (mv.rows > 1)
    b.n1(mv.rows).lxs1(1).ms1(mv.rowStride);
  if (mv.blocks > 1)
    b.n2(mv.blocks).lxs2(mv.lxBlockStride).ms2(mv.blockStride);
}

template <isa::Format F> void setFmt(InstrOf<F> &b, bool f32) {
  if (f32)
    b.fmt(isa::StickFormat::F32);
}

template <isa::Format F> void setRows(InstrOf<F> &b, const Rows &r) {
  using isa::Field;
  using B = InstrOf<F>;
  if constexpr (B::has(Field::N))
    b.n(r.n);
  b.m(r.m);
  // A row reduction writes one stick a row: its dst stride defaults to 1.
  if constexpr (F == isa::Format::RowReduce)
    b.ds(r.ds != 0 ? r.ds : 1);
  else if constexpr (B::has(Field::Ds))
    b.ds(r.ds != 0 ? r.ds : r.n);
  if constexpr (B::has(Field::Ss))
    b.ss(r.ss != 0 ? r.ss : r.n);
  if (r.count != 0)
    b.count(r.count);
}

template <isa::Format F>
InstrOf<F> sfuRows(isa::Opcode op, Addr dst, Addr src, const Rows &r,
                   bool f32) {
  InstrOf<F> b = instrOf<F>(op);
  b.dst(dst).src(src);
  setRows(b, r);
  setFmt(b, f32);
  return b;
}

} // namespace

InstrOf<isa::Format::Load> loadSticks(Addr lx, Addr mem, const StickMove &mv) {
  auto b = instr<isa::Opcode::Ld>().lx(lx).mem(mem);
  setMove(b, mv);
  return b;
}

InstrOf<isa::Format::Store> storeSticks(Addr mem, Addr lx,
                                        const StickMove &mv) {
  auto b = instr<isa::Opcode::St>().mem(mem).lx(lx);
  setMove(b, mv);
  return b;
}

InstrBuilder sfuUnary(isa::Opcode op, Addr dst, Addr src, const Rows &r,
                      bool f32) {
  using isa::Format;
  switch (isa::formatOf(op)) {
  case Format::SfuUnary:
    return sfuRows<Format::SfuUnary>(op, dst, src, r, f32);
  case Format::RowReduce:
    return sfuRows<Format::RowReduce>(op, dst, src, r, f32);
  case Format::ColReduce:
    return sfuRows<Format::ColReduce>(op, dst, src, r, f32);
  default:
    SPYRE_UNREACHABLE(std::string(isa::opcodeName(op)) +
                      " is no unary or reduction SFU op");
  }
}

InstrOf<isa::Format::SfuBinary> sfuBinary(isa::Opcode op, Addr dst, Addr src1,
                                          Addr src2, const Rows &r, bool stick,
                                          bool f32) {
  auto b = instrOf<isa::Format::SfuBinary>(op);
  b.dst(dst).src1(src1).src2(src2);
  setRows(b, r);
  b.s2s(r.s2s);
  if (stick)
    b.s2(isa::Src2Mode::Stick);
  setFmt(b, f32);
  return b;
}

InstrOf<isa::Format::SfuScalar> sfuScalar(isa::Opcode op, Addr dst, Addr src,
                                          float imm, const Rows &r, bool f32) {
  auto b = instrOf<isa::Format::SfuScalar>(op);
  b.dst(dst).src(src).imm(imm);
  setRows(b, r);
  setFmt(b, f32);
  return b;
}

InstrOf<isa::Format::Cvt> sfuCvt(Addr dst, Addr src, bool toF32,
                                 const Rows &r) {
  auto b = instr<isa::Opcode::Cvt>().dst(dst).src(src).to(
      toF32 ? isa::StickFormat::F32 : isa::StickFormat::Dl16);
  b.n(r.n).m(r.m);
  if (r.ds != 0)
    b.ds(r.ds);
  b.ss(r.ss != 0 ? r.ss : r.n);
  if (r.count != 0)
    b.count(r.count);
  return b;
}

} // namespace spyre::codegen
