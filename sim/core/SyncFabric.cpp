// Counters, barriers and ring channels (SyncFabric.h).
#include "sim/core/SyncFabric.h"

#include "sim/core/InstrFields.h"
#include "sim/core/ScheduleChecker.h"
#include "sim/core/Semantics.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <cstdlib>

namespace spyre::sim {

using isa::Instr;
using isa::Opcode;

SyncFabric::SyncFabric(RunState &run, Ring &dataRing, Ring &reduceRing)
    : run_(run), dataRing_(dataRing), reduceRing_(reduceRing),
      syncCycles_(static_cast<Cycle>(run.config.sequencer.syncCycles)) {
  counters_.resize(static_cast<size_t>(run.config.chip.cores) *
                   static_cast<size_t>(run.config.limits.syncCountersPerCore));
  barriers_.resize(static_cast<size_t>(run.config.limits.barriers));
}

// ------------------------------------------------------------- latencies

int SyncFabric::hops(int coreA, int coreB) const {
  const int pa = dataRing_.positionOf(RingNode::core(coreA));
  const int pb = dataRing_.positionOf(RingNode::core(coreB));
  const int d = std::abs(pa - pb);
  return std::min(d, dataRing_.positions() - d);
}

Cycle SyncFabric::signalLatency(int fromCore, int toCore) const {
  if (fromCore == toCore)
    return syncCycles_;
  return syncCycles_ + static_cast<Cycle>(hops(fromCore, toCore)) *
                           dataRing_.hopLatencyCycles();
}

Cycle SyncFabric::barrierLatency() const {
  // Arrivals gather at one point of the ring and the release travels back:
  // twice the farthest distance on the ring.
  return syncCycles_ + 2 * static_cast<Cycle>(dataRing_.positions() / 2) *
                           dataRing_.hopLatencyCycles();
}

Cycle SyncFabric::leastTransferCycles(int core, const Instr &r) const {
  // It starts no earlier than it is posted, crosses at least one hop and
  // holds its links for its bytes over the ring's width (Ring::transfer). A
  // transfer between a core and itself uses no link and costs nothing.
  if (static_cast<int>(r[instrFields().ringCore]) == core)
    return 0;
  const bool reduce = r.opcode == Opcode::Rsend || r.opcode == Opcode::Racc;
  const Ring &ring = reduce ? reduceRing_ : dataRing_;
  return ring.hopLatencyCycles() +
         ring.durationCycles(rowSticksOf(r) * isa::kStickBytes);
}

// -------------------------------------------------------------- counters

SyncFabric::Counter &SyncFabric::counterOf(int core, int counter) {
  return counters_[static_cast<size_t>(core) *
                       static_cast<size_t>(
                           run_.config.limits.syncCountersPerCore) +
                   static_cast<size_t>(counter)];
}

const SyncFabric::Counter &SyncFabric::counterOf(int core, int counter) const {
  return counters_[static_cast<size_t>(core) *
                       static_cast<size_t>(
                           run_.config.limits.syncCountersPerCore) +
                   static_cast<size_t>(counter)];
}

SyncFabric::Release SyncFabric::takeTokens(Counter &c, int64_t need,
                                           int stream) {
  // Tokens are ordered by the cycle they become visible, so taking from the
  // front takes the earliest; the wait completes when the last one it takes
  // has arrived, and that token's signal is what released it.
  c.available -= need;
  Release last;
  while (need > 0) {
    Token &tok = c.tokens.front();
    if (run_.checker)
      run_.checker->acquire(stream, tokenClocks_[tok.clock]);
    if (tok.visibleAt >= last.visible)
      last = {tok.visibleAt, tok.core, tok.slice};
    const int64_t take = std::min(need, tok.amount);
    tok.amount -= take;
    need -= take;
    if (tok.amount == 0) {
      if (tok.clock != kNoClock) {
        run_.checker->recycle(std::move(tokenClocks_[tok.clock]));
        freeClocks_.push_back(tok.clock);
      }
      c.tokens.pop_front();
    }
  }
  return last;
}

void SyncFabric::signal(StreamState &st, const Instr &in) {
  const InstrFields &fp = instrFields();
  const int target = in[fp.sigCore] == isa::kCoreSelf
                         ? st.core
                         : static_cast<int>(in[fp.sigCore]);
  Counter &c = counterOf(target, static_cast<int>(in[fp.sigCounter]));
  // The token is recorded now, stamped with the cycle it reaches the
  // counter; nothing can observe it earlier, because a wait completes no
  // sooner than the tokens it takes are visible.
  // The signal's own slice is the next one recorded (by complete below).
  Token tok{in[fp.sigValue], st.time + signalLatency(st.core, target),
            run_.records ? run_.records->nextSlice() : -1, st.core, kNoClock};
  if (run_.checker) {
    if (freeClocks_.empty()) {
      tok.clock = static_cast<uint32_t>(tokenClocks_.size());
      tokenClocks_.emplace_back();
    } else {
      tok.clock = freeClocks_.back();
      freeClocks_.pop_back();
    }
    tokenClocks_[tok.clock] = run_.checker->takeClock(st.index);
  }
  c.tokens.insertSorted(tok, [](const Token &a, const Token &b) {
    return a.visibleAt < b.visibleAt;
  });
  c.available += in[fp.sigValue];
  st.stats.busyCycles += syncCycles_;
  run_.complete(st, st.time + syncCycles_);
  // Wake waiters in the order they blocked, while the counter covers them.
  while (!c.waiters.empty()) {
    StreamState &w = run_.streams[static_cast<size_t>(c.waiters.front())];
    if (c.available < w.waitValue)
      return;
    c.waiters.pop_front();
    wake(w, takeTokens(c, w.waitValue, w.index));
  }
}

bool SyncFabric::wait(StreamState &st, const Instr &in) {
  const InstrFields &fp = instrFields();
  const int counter = static_cast<int>(in[fp.waitCounter]);
  const int64_t value = in[fp.waitValue];
  Counter &c = counterOf(st.core, counter);
  if (c.waiters.empty() && c.available >= value) {
    const Release rel = takeTokens(c, value, st.index);
    st.blockedSince = st.time;
    if (rel.visible > st.time) {
      st.stats.stall(waitReason(st, rel), rel.visible - st.time);
      st.time = rel.visible;
      if (run_.records)
        run_.records->released(st.index, rel.visible, rel.slice,
                               ReleaseEdge::Signal);
    }
    st.stats.busyCycles += syncCycles_;
    run_.complete(st, st.time + syncCycles_);
    return true;
  }
  st.block = Block::Counter;
  st.blockedSince = st.time;
  st.waitCounter = counter;
  st.waitValue = value;
  c.waiters.push_back(st.index);
  return false;
}

void SyncFabric::wake(StreamState &st, const Release &release) {
  const Cycle at = std::max(release.visible, st.time);
  st.stats.stall(waitReason(st, release), at - st.blockedSince);
  if (at > st.blockedSince && run_.records)
    run_.records->released(st.index, at, release.slice, ReleaseEdge::Signal);
  st.stats.busyCycles += syncCycles_;
  st.block = Block::None;
  st.time = at;
  run_.complete(st, at + syncCycles_);
  run_.resume(st);
}

// -------------------------------------------------------------- barriers

bool SyncFabric::barrier(StreamState &st, const Instr &in) {
  const InstrFields &fp = instrFields();
  const auto id = static_cast<size_t>(in[fp.barId]);
  const int64_t count = in[fp.barCount];
  BarrierState &b = barriers_[id];
  if (run_.checker) {
    VectorClock vc = run_.checker->release(st.index);
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
  const Cycle release = b.lastArrival + barrierLatency();
  const Cycle lastArrival = b.lastArrival;
  const std::vector<int> arrived = std::move(b.arrived);
  const VectorClock joined = std::move(b.joined);
  b = BarrierState{};
  // The slices are recorded in arrival order below; the first stream that
  // arrived at the last arrival's cycle is the one that released the others.
  int64_t lastSlice = -1;
  if (run_.records) {
    const int64_t firstSlice = run_.records->nextSlice();
    for (size_t k = 0; k < arrived.size() && lastSlice < 0; ++k)
      if (run_.streams[static_cast<size_t>(arrived[k])].blockedSince ==
          lastArrival)
        lastSlice = firstSlice + static_cast<int64_t>(k);
  }
  for (int s : arrived) {
    StreamState &w = run_.streams[static_cast<size_t>(s)];
    if (run_.checker)
      run_.checker->acquire(s, joined);
    w.stats.stall(StallReason::Barrier, release - w.blockedSince);
    if (run_.records && w.blockedSince < lastArrival)
      run_.records->released(s, lastArrival, lastSlice, ReleaseEdge::Barrier);
    w.block = Block::None;
    w.time = release;
    run_.complete(w, release);
    run_.resume(w);
  }
  return false;
}

// ---------------------------------------------------------- ring channels

bool SyncFabric::transfer(StreamState &st, const Instr &r, const Region &region,
                          bool inBounds) {
  const Opcode op = r.opcode;
  const int peer = static_cast<int>(r[instrFields().ringCore]);
  const bool reduce = op == Opcode::Rsend || op == Opcode::Racc;
  const bool sending = op == Opcode::Send || op == Opcode::Rsend;
  TransferPost post{st.index, st.time, region, {}, inBounds};
  if (sending && run_.checker)
    post.clock = run_.checker->release(st.index);
  const int src = sending ? st.core : peer, dst = sending ? peer : st.core;
  Channel &ch = channels_[{reduce, src, dst}];
  (sending ? ch.sends : ch.recvs).push_back(std::move(post));
  st.block = Block::Transfer;
  st.blockedSince = st.time;
  st.peerCore = peer;
  matchTransfers(ch, reduce, src, dst);
  return false;
}

void SyncFabric::matchTransfers(Channel &ch, bool reduce, int srcCore,
                                int dstCore) {
  while (!ch.sends.empty() && !ch.recvs.empty()) {
    TransferPost s = std::move(ch.sends.front());
    TransferPost r = std::move(ch.recvs.front());
    ch.sends.pop_front();
    ch.recvs.pop_front();
    StreamState &sender = run_.streams[static_cast<size_t>(s.stream)];
    StreamState &receiver = run_.streams[static_cast<size_t>(r.stream)];
    const int64_t sendSticks = s.region.sticks(),
                  recvSticks = r.region.sticks();
    if (sendSticks != recvSticks)
      run_.findings.report(
          FindingKind::TransferMismatch, &receiver, std::max(s.time, r.time),
          "receives " + std::to_string(recvSticks) +
              " sticks but the matching " +
              run_.findings.describeInstr(s.stream, sender.pc) + " sends " +
              std::to_string(sendSticks));
    const int64_t sticks = std::min(sendSticks, recvSticks);
    const Cycle start = std::max(s.time, r.time);
    Ring &ring = reduce ? reduceRing_ : dataRing_;
    const RingTransferResult tr =
        ring.transfer(start, RingNode::core(srcCore), RingNode::core(dstCore),
                      static_cast<uint64_t>(sticks) * isa::kStickBytes);
    if (run_.checker)
      run_.checker->acquire(r.stream, s.clock);
    // An end outside LX was reported when it was issued: the transfer
    // still takes its time but moves and checks no data.
    const bool inBounds = s.inBounds && r.inBounds;
    if (run_.options.numerics && inBounds && sendSticks == recvSticks) {
      const std::string payload =
          gather(s.region, run_.lx[static_cast<size_t>(srcCore)].data());
      uint8_t *lx = run_.lx[static_cast<size_t>(dstCore)].data();
      if (reduce)
        accumulateF32(r.region, payload, lx);
      else
        scatter(r.region, payload, lx);
    }
    // The receiver's LX write is checked after it acquired the sender's clock.
    if (run_.checker && inBounds)
      run_.checker->received(receiver, dstCore, r.region, start);
    // The sender's slice is recorded first, then the receiver's; the side
    // posted first was released by the other's posting.
    const uint64_t bytes = static_cast<uint64_t>(sticks) * isa::kStickBytes;
    if (Recorder *rec = run_.records) {
      const int64_t senderSlice = rec->nextSlice();
      rec->ring(reduce, tr, bytes);
      rec->current(r.stream).partner = senderSlice;
      if (s.time < start)
        rec->released(s.stream, start, senderSlice + 1, ReleaseEdge::Transfer);
      if (r.time < start)
        rec->released(r.stream, start, senderSlice, ReleaseEdge::Transfer);
      rec->current(s.stream).bytes = bytes;
      rec->current(r.stream).bytes = bytes;
    }
    for (auto [stp, post] :
         {std::pair{&sender, &s}, std::pair{&receiver, &r}}) {
      StreamState &w = *stp;
      const Cycle sync = start - post->time;
      w.stats.stall(StallReason::Peer, sync);
      w.stats.stall(StallReason::Ring, tr.waited);
      w.stats.busyCycles += tr.done - tr.start;
      w.block = Block::None;
      run_.complete(w, tr.done);
      run_.resume(w);
    }
  }
}

// -------------------------------------------------------------- deadlock

std::string SyncFabric::blockedText(const StreamState &st) const {
  switch (st.block) {
  case Block::Counter: {
    const Counter &c = counterOf(st.core, st.waitCounter);
    return "waits forever for counter c" + std::to_string(st.waitCounter) +
           " of core " + std::to_string(st.core) + " to reach " +
           std::to_string(st.waitValue) + " (it holds " +
           std::to_string(c.available) + ")";
  }
  case Block::Barrier:
    return "waits forever at barrier " + std::to_string(st.waitBarrier) +
           " for " + std::to_string(st.waitValue) + " streams (" +
           std::to_string(
               barriers_[static_cast<size_t>(st.waitBarrier)].arrived.size()) +
           " arrived)";
  case Block::Transfer: {
    const Opcode op = st.code->code[st.pc].opcode;
    return std::string("waits forever for a matching ") +
           (op == Opcode::Send || op == Opcode::Rsend ? "receive on core "
                                                      : "send from core ") +
           std::to_string(st.peerCore);
  }
  default:
    return "stopped before its halt";
  }
}

} // namespace spyre::sim
