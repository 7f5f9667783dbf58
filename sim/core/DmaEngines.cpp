// The DMA engines (DmaEngines.h).
#include "sim/core/DmaEngines.h"

#include "sim/core/Machine.h" // MemoryPort
#include "sim/core/Semantics.h"

#include <algorithm>
#include <array>

namespace spyre::sim {

DmaEngines::DmaEngines(RunState &run, const CostModel &costs)
    : run_(run), costs_(costs),
      burstSticks_(
          std::max<int64_t>(1, run.config.dma.burstBytes / isa::kStickBytes)),
      transfers_(run.program.streams.size()) {}

bool DmaEngines::pastCycleLimit(const StreamState &st,
                                std::span<const Footprint> fp) {
  const Cycle limit = run_.options.maxCycles;
  if (limit == 0)
    return false;
  // A transfer cannot move its device-memory sticks faster than the memory
  // interface's peak, so one that would end past the limit is not run at
  // all: walking a descriptor of millions of runs (checks, numbers) would
  // take the host far longer than the limit allows for.
  const double peakSticksPerCycle = run_.config.memory.peakGBps /
                                    run_.config.chip.clockGhz /
                                    static_cast<double>(isa::kStickBytes);
  for (const Footprint &f : fp) {
    if (!f.deviceMemory)
      continue;
    const double least =
        static_cast<double>(f.region.sticks()) / peakSticksPerCycle;
    if (static_cast<double>(st.time) + least <= static_cast<double>(limit))
      continue;
    run_.stop(FindingKind::MaxCycles, &st, limit,
              "the run passed --max-cycles " + std::to_string(limit) +
                  ": a transfer of " + std::to_string(f.region.sticks()) +
                  " sticks cannot end before it");
    return true;
  }
  return false;
}

bool DmaEngines::start(StreamState &st, const isa::Instr &resolved,
                       std::span<const Footprint> fp, bool inBounds) {
  Transfer &d = transfers_[static_cast<size_t>(st.index)];
  d.inFlight.clear(); // keeps its storage
  d.memRegion = d.lxRegion = Region{};
  d.i1 = d.i2 = d.runOffset = 0;
  d.lastMemWait = d.lastRingWait = d.slotWait = 0;
  d.isLoad = resolved.opcode == isa::Opcode::Ld;
  for (const Footprint &f : fp)
    (f.deviceMemory ? d.memRegion : d.lxRegion) = f.region;
  // A port that carries data moves the bytes burst by burst instead.
  if (inBounds && run_.options.numerics && !run_.port->carriesData()) {
    uint8_t *lx = run_.lx[static_cast<size_t>(st.core)].data();
    if (d.isLoad)
      executeLoad(resolved, run_.memory, lx);
    else
      executeStore(resolved, lx, run_.memory);
  }
  const uint64_t bytes =
      inBounds ? static_cast<uint64_t>(d.memRegion.sticks()) * isa::kStickBytes
               : 0;
  (d.isLoad ? readBytes_ : writeBytes_) += bytes;
  if (run_.records)
    run_.records->current(st.index).bytes = bytes;
  d.issueAt = st.time;
  d.nextBurstAt = st.time + costs_.dmaIssueLatencyCycles();
  d.done = d.nextBurstAt;
  if (!inBounds || bytes == 0)
    d.i2 = d.memRegion.n2; // nothing to move
  if (issueBursts(st, st.time))
    return true;
  st.block = Block::Dma;
  return false;
}

bool DmaEngines::issueBursts(StreamState &st, Cycle now) {
  Transfer &d = transfers_[static_cast<size_t>(st.index)];
  const Region &r = d.memRegion;
  const auto maxOut = static_cast<size_t>(costs_.dmaMaxOutstanding());
  while (d.i2 < r.n2) {
    // Bursts reach the memory interface in the order they are processed, so
    // one that must wait for a free slot waits for its time in the queue.
    Cycle t = d.nextBurstAt;
    if (d.inFlight.size() >= maxOut) {
      Cycle slot = d.inFlight.front();
      if (slot > now) {
        run_.queue.push(EventKind::DmaBurst, slot, st.core, st.index);
        return false;
      }
      d.inFlight.pop_front();
      if (slot > t) {
        d.slotWait += slot - t;
        t = slot;
      }
    }
    const int64_t runStart = r.base + d.i2 * r.s2 + d.i1 * r.s1;
    const int64_t len = std::min(burstSticks_, r.run - d.runOffset);
    const bool newRun = d.runOffset == 0;
    const auto addr =
        static_cast<uint64_t>(runStart + d.runOffset) * isa::kStickBytes;
    const uint64_t burstBytes = static_cast<uint64_t>(len) * isa::kStickBytes;
    uint8_t *data = nullptr;
    if (run_.options.numerics && run_.port->carriesData()) {
      const Region &x = d.lxRegion;
      data =
          run_.lx[static_cast<size_t>(st.core)].data() +
          (x.base + d.i2 * x.s2 + d.i1 * x.s1 + d.runOffset) * isa::kStickBytes;
    }
    const DmaRunTiming timing = run_.port->dmaBurst(
        t, st.core, addr, burstBytes,
        d.isLoad ? Direction::Read : Direction::Write, newRun, data);
    if (timing.done >= d.done) {
      d.lastMemWait = timing.memory.waited;
      d.lastRingWait = timing.ring.waited;
    }
    d.done = std::max(d.done, timing.done);
    d.inFlight.push_back(timing.done);
    if (run_.records)
      run_.records->memoryBurst(d.isLoad, timing, burstBytes);
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
  finish(st);
  return true;
}

void DmaEngines::finish(StreamState &st) {
  Transfer &d = transfers_[static_cast<size_t>(st.index)];
  const Cycle end = std::max(d.done, d.nextBurstAt);
  const Cycle duration = end - d.issueAt;
  // Stalls are the waiting that delayed completion: the engine's waits for a
  // free burst slot (sequential on its issue timeline), and the memory and
  // ring queueing of the burst that finished last. The rest is busy:
  // transfer, latency and setup.
  // Each is capped by what the others before it (in StallReason order) left
  // of the duration.
  static_assert(StallReason::Memory < StallReason::Ring &&
                StallReason::Ring < StallReason::DmaSlots);
  Cycle stalled = 0;
  auto charge = [&](StallReason reason, Cycle cycles) {
    const Cycle c = std::min(cycles, duration - stalled);
    st.stats.stall(reason, c);
    stalled += c;
  };
  charge(StallReason::Memory, d.lastMemWait);
  charge(StallReason::Ring, d.lastRingWait);
  charge(StallReason::DmaSlots, d.slotWait);
  st.stats.busyCycles += duration - stalled;
  st.block = Block::None;
  run_.complete(st, end);
}

} // namespace spyre::sim
