// One engine stream as it runs: where it is in its code, its registers and
// loops, its time, what it waits for, and its statistics. Every part of the
// Machine (sim/core/Machine.h) works on these; the stream executor owns
// their control flow.
#pragma once

#include "isa/Program.h"
#include "sim/timing/Stall.h"
#include "sim/timing/Time.h"

#include <array>
#include <cstdint>

namespace spyre::sim {

struct EngineStats {
  uint64_t instructions = 0;
  Cycle busyCycles = 0;
  /// Stalled cycles by reason, charged with stall().
  std::array<Cycle, kNumStallReasons> stallCycles{};
  Cycle stallTotal = 0; ///< the sum of stallCycles
  Cycle finishedAt = 0; ///< cycle of its halt (or of the end of the run)

  void stall(StallReason reason, Cycle cycles) {
    stallCycles[static_cast<size_t>(reason)] += cycles;
    stallTotal += cycles;
  }
};

/// What a stream that cannot go on waits for.
enum class Block { None, Counter, Barrier, Transfer, Dma };

struct LoopFrame {
  uint32_t first = 0;
  uint32_t end = 0;
  uint32_t remaining = 0;
};

struct StreamState {
  const isa::Stream *code = nullptr;
  int index = 0;
  int core = 0;
  uint32_t pc = 0;
  std::array<int64_t, 16> regs{};
  /// limits.max_loop_depth is at most 16 (hw/ConfigSchema.cpp).
  std::array<LoopFrame, 16> loops{};
  int depth = 0;
  Cycle time = 0;
  Cycle instrStart = 0; ///< when the current instruction started
  bool halted = false;
  Block block = Block::None;
  Cycle blockedSince = 0;
  int waitCounter = 0;   ///< Block::Counter: the counter
  int64_t waitValue = 0; ///< Counter: the value; Barrier: the stream count
  int waitBarrier = 0;   ///< Block::Barrier: the barrier
  int peerCore = 0;      ///< Block::Transfer: the other side's core
  EngineStats stats;

  /// Moves past the current instruction, closing the loops that end there.
  void advancePc() {
    ++pc;
    while (depth > 0 && pc == loops[depth - 1].end) {
      LoopFrame &lf = loops[depth - 1];
      if (--lf.remaining > 0) {
        pc = lf.first;
        return;
      }
      --depth;
    }
  }
};

} // namespace spyre::sim
