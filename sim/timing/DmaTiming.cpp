// One DMA run through the memory channel and the data ring (see DmaTiming.h).
#include "sim/timing/DmaTiming.h"

#include <algorithm>

namespace spyre::sim {

DmaRunTiming timeDmaRun(const CostModel &costs, MemoryChannel &memory,
                        Ring &dataRing, Cycle t, int core, uint64_t bytes,
                        Direction dir, bool newRun) {
  const Cycle ready = t + (newRun ? costs.dmaRunSetupCycles() : 0);
  const RingNode coreNode = RingNode::core(core);
  DmaRunTiming out;
  if (dir == Direction::Read) {
    out.memory = memory.request(ready, bytes, Direction::Read);
    out.ring = dataRing.transfer(out.memory.start + memory.latencyCycles(),
                                 RingNode::memory(), coreNode, bytes);
    const Cycle lastByteAtCore =
        out.memory.dataDone +
        static_cast<Cycle>(out.ring.hops) * dataRing.hopLatencyCycles();
    out.done = std::max(out.ring.done, lastByteAtCore);
    return out;
  }
  out.ring = dataRing.transfer(ready, coreNode, RingNode::memory(), bytes);
  const Cycle firstByteAtMemory =
      out.ring.start +
      static_cast<Cycle>(out.ring.hops) * dataRing.hopLatencyCycles();
  out.memory = memory.request(firstByteAtMemory, bytes, Direction::Write);
  out.done =
      std::max(out.memory.dataDone, out.ring.done + memory.latencyCycles());
  return out;
}

DmaRunTiming timeDmaRunAroundMemory(Ring &dataRing, Cycle ready, int core,
                                    uint64_t bytes, Direction dir,
                                    Cycle memoryCycles) {
  const RingNode coreNode = RingNode::core(core);
  DmaRunTiming out;
  if (dir == Direction::Read) {
    out.memory = {ready, ready + memoryCycles, 0};
    out.ring = dataRing.transfer(out.memory.dataDone, RingNode::memory(),
                                 coreNode, bytes);
    out.done = out.ring.done;
    return out;
  }
  out.ring = dataRing.transfer(ready, coreNode, RingNode::memory(), bytes);
  out.memory = {out.ring.done, out.ring.done + memoryCycles, 0};
  out.done = out.memory.dataDone;
  return out;
}

} // namespace spyre::sim
