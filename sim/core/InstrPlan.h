// What the Machine needs of a data instruction (ld/st, PT, SFU, ring) that
// does not depend on the registers, worked out once rather than on every
// execution: the regions it touches with their base registers, and the
// cycles and work of a PT or SFU instruction. An instruction is planned the
// second time it runs: a program that runs each instruction once (a compiled
// layer without loops) pays for no plan and keeps 4 bytes per instruction.
//
// The regions come from Semantics' `footprint` itself, never from a second
// description of the operands: each address field is moved and the regions
// that move with it, by exactly as much, are the ones based on it. An
// instruction whose regions do not follow its address fields that way keeps
// no plan and is resolved and decoded on every execution, as before.
#pragma once

#include "isa/Program.h"
#include "sim/core/Region.h"
#include "sim/timing/CostModel.h"

#include <array>
#include <cstdint>
#include <vector>

namespace spyre::sim {

/// One region an instruction touches, with the register its base follows.
struct PlannedAccess {
  /// The footprint with the base register at 0 (the address field's offset).
  Footprint footprint;
  /// The register whose value is added to the base; 0 when none (r0 reads 0).
  uint8_t baseReg = 0;
  /// lowest() and highest() of the region minus its base.
  int64_t lowOffset = 0, highOffset = 0;
};

/// A PT or SFU instruction's cycles and work (MACs, or sticks), from its count
/// fields alone.
struct ComputeCost {
  Cycle cycles = 0;
  uint64_t work = 0;
};

struct InstrPlan {
  /// `accesses` hold its footprint and its operands are valid whatever the
  /// registers hold (false: resolve, decode and check it each time).
  bool planned = false;
  uint8_t accessCount = 0;
  static constexpr int kMaxAccesses = 4;
  std::array<PlannedAccess, kMaxAccesses> accesses{};
  /// Positions of the address fields whose base register is not r0 (what
  /// `resolve` adds a register to).
  uint8_t addressCount = 0;
  std::array<uint8_t, isa::kMaxFields> addressFields{};
  /// PT and SFU instructions.
  ComputeCost compute;
};

/// The plan of one instruction (`planned` false when it cannot have one).
InstrPlan planInstr(const isa::Instr &in, const CostModel &costs);

/// The plans of a program's instructions, made on their second execution.
class InstrPlans {
public:
  InstrPlans(const isa::Program &program, const CostModel &costs);

  /// The plan of instruction `pc` of stream `stream`, or null the first time
  /// it runs (and always for one that cannot have a plan).
  const InstrPlan *find(int stream, uint32_t pc) {
    uint32_t &slot = slots_[static_cast<size_t>(stream)][pc];
    if (slot >= kFirstPlan)
      return &plans_[slot - kFirstPlan];
    if (slot == kNeverRun) {
      slot = kRunOnce;
      return nullptr;
    }
    if (slot == kNoPlan)
      return nullptr;
    return make(stream, pc);
  }

private:
  static constexpr uint32_t kNeverRun = 0, kRunOnce = 1, kNoPlan = 2,
                            kFirstPlan = 3;
  const InstrPlan *make(int stream, uint32_t pc);

  const isa::Program &program_;
  const CostModel &costs_;
  /// Per stream, per instruction: kNeverRun, kRunOnce, kNoPlan, or
  /// kFirstPlan + its index in plans_.
  std::vector<std::vector<uint32_t>> slots_;
  std::vector<InstrPlan> plans_;
};

/// A PT or SFU instruction's cost, `resolved` with its address fields
/// resolved (they do not enter the cost).
ComputeCost computeCost(const isa::Instr &resolved, const CostModel &costs);

} // namespace spyre::sim
