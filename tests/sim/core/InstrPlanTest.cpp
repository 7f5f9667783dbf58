// The plan of an instruction (sim/core/InstrPlan.h) against decoding it
// afresh: for every data instruction of the ISA table, with its address
// fields on base registers, the planned regions moved by the registers are
// the footprint of the resolved instruction, their spans its lowest and
// highest sticks, and a PT or SFU instruction's planned cost its cost.
#include "sim/core/InstrPlan.h"
#include "hw/HwConfig.h"
#include "isa/InstrTable.h"
#include "sim/core/Semantics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

using namespace spyre;
using namespace spyre::sim;

namespace {

/// An instruction of `d` with small valid counts, the first value of each
/// enum, address field k at an offset on register k + 1.
isa::Instr sample(const isa::InstrDesc &d, int64_t variant) {
  isa::Instr in;
  in.opcode = d.opcode;
  uint8_t reg = 1;
  for (size_t f = 0; f < d.fields.size(); ++f) {
    const isa::FieldDesc &fd = d.fields[f];
    if (fd.isAddress()) {
      in.value[f] = 40 + 9 * static_cast<int64_t>(f) - variant;
      in.base[f] = reg++;
      continue;
    }
    int64_t v = std::clamp<int64_t>(2 + variant, fd.minValue, fd.maxValue);
    v = (v + fd.multipleOf - 1) / fd.multipleOf * fd.multipleOf;
    in.value[f] = fd.kind == isa::FieldKind::Enum ? variant % 2 : v;
  }
  return in;
}

isa::Instr resolved(const isa::Instr &in, const std::array<int64_t, 16> &regs) {
  isa::Instr out = in;
  const isa::InstrDesc &d = in.desc();
  for (size_t f = 0; f < d.fields.size(); ++f)
    if (d.fields[f].isAddress()) {
      out.value[f] = regs[in.base[f]] + in.value[f];
      out.base[f] = 0;
    }
  return out;
}

bool isData(isa::Family f) {
  using isa::Family;
  return f != Family::None && f != Family::Control && f != Family::Host &&
         f != Family::RegLoad;
}

} // namespace

TEST(InstrPlan, RegionsAndCostAreThoseOfTheResolvedInstruction) {
  const CostModel costs(hw::builtinConfig());
  std::array<int64_t, 16> regs{};
  for (size_t r = 1; r < regs.size(); ++r)
    regs[r] = 1000 * static_cast<int64_t>(r) - 3;
  int planned = 0;
  for (const isa::InstrDesc &d : isa::instructionTable()) {
    if (!isData(d.family))
      continue;
    for (int64_t variant = 0; variant < 3; ++variant) {
      const isa::Instr in = sample(d, variant);
      const InstrPlan plan = planInstr(in, costs);
      const isa::Instr r = resolved(in, regs);
      if (operandErrorDependsOnAddresses(d.opcode) ||
          !operandError(r).empty()) {
        EXPECT_FALSE(plan.planned) << d.mnemonic;
        continue;
      }
      ASSERT_TRUE(plan.planned) << d.mnemonic;
      ++planned;
      std::vector<Footprint> expect;
      footprint(r, expect);
      ASSERT_EQ(plan.accessCount, expect.size()) << d.mnemonic;
      for (size_t k = 0; k < expect.size(); ++k) {
        const PlannedAccess &a = plan.accesses[k];
        Footprint f = a.footprint;
        f.region.base += regs[a.baseReg];
        EXPECT_EQ(f, expect[k]) << d.mnemonic << " region " << k;
        EXPECT_EQ(f.region.base + a.lowOffset, expect[k].region.lowest());
        EXPECT_EQ(f.region.base + a.highOffset, expect[k].region.highest());
      }
      const bool compute =
          d.family != isa::Family::Dma && d.family != isa::Family::Ring;
      if (compute) {
        const ComputeCost c = computeCost(r, costs);
        EXPECT_EQ(plan.compute.cycles, c.cycles) << d.mnemonic;
        EXPECT_EQ(plan.compute.work, c.work) << d.mnemonic;
      }
    }
  }
  EXPECT_GT(planned, 20);
}

TEST(InstrPlan, ResolvesOnlyTheAddressFieldsOnARegister) {
  const CostModel costs(hw::builtinConfig());
  const isa::InstrDesc &ld = isa::instrDesc(isa::Opcode::Ld);
  isa::Instr in = sample(ld, 0);
  for (size_t f = 0; f < ld.fields.size(); ++f)
    if (ld.fields[f].isAddress() && ld.fields[f].kind == isa::FieldKind::LxAddr)
      in.base[f] = 0; // the LX address is a constant
  const InstrPlan plan = planInstr(in, costs);
  ASSERT_TRUE(plan.planned);
  ASSERT_EQ(plan.addressCount, 1);
  EXPECT_EQ(ld.fields[plan.addressFields[0]].kind, isa::FieldKind::MemAddr);
}
