// The time of one contiguous DMA run: memory channel and data ring together.
//
// A load run (memory -> LX) asks the memory channel for the bytes, then
// streams them over the data ring from the memory node to the core as soon as
// the first data returns (cut-through); it is done when the ring has
// delivered the last byte, which cannot be before the memory produced it. A
// store run (LX -> memory) streams over the ring first and writes from the
// moment the first data reaches the memory node. Either way the run first
// pays dma.runSetupCycles; dma.issueLatencyCycles is per instruction and
// dma.maxOutstanding is enforced by the scheduler, not here.
#pragma once

#include "sim/timing/CostModel.h"
#include "sim/timing/MemoryChannel.h"
#include "sim/timing/Ring.h"

namespace spyre::sim {

struct DmaRunTiming {
  Cycle done = 0; ///< last byte at its destination (LX, or memory written)
  MemoryRequestResult memory;
  RingTransferResult ring;
};

/// Times a run of `bytes` (> 0) between device memory and core `core`,
/// started by the engine at cycle `t`; `dir` is Read for a load, Write for a
/// store.
/// `newRun` is false for the later bursts of a run that the engine splits
/// into several requests: they continue a contiguous run and pay no setup.
DmaRunTiming timeDmaRun(const CostModel &costs, MemoryChannel &memory,
                        Ring &dataRing, Cycle t, int core, uint64_t bytes,
                        Direction dir, bool newRun = true);

/// Times a burst whose memory part another model answered: it holds the
/// memory for `memoryCycles` and the data ring is this chip's. A read
/// (device memory to core `core`) has its bytes from `ready` + memoryCycles,
/// then crosses the ring to the core; a write crosses the ring from the core
/// at `ready`, then takes memoryCycles in memory. No memory channel is
/// involved (its waits are zero); the ring queues as for every transfer.
DmaRunTiming timeDmaRunAroundMemory(Ring &dataRing, Cycle ready, int core,
                                    uint64_t bytes, Direction dir,
                                    Cycle memoryCycles);

} // namespace spyre::sim
