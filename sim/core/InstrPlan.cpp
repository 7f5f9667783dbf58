// Plans of data instructions (InstrPlan.h).
#include "sim/core/InstrPlan.h"

#include "sim/core/InstrFields.h"
#include "sim/core/Semantics.h"
#include "support/Diagnostic.h"

namespace spyre::sim {

using isa::Engine;
using isa::Instr;
using isa::Opcode;

namespace {

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

bool isCompute(Opcode op) {
  return op == Opcode::Mm || op == Opcode::Mmi8 || isSfu(op);
}

/// Which address field each region of `base`'s footprint follows: each
/// address field is moved by two amounts, and a region must either stay as
/// it is or move its base by exactly that amount and change nothing else.
/// False when some region does not follow one field that way.
bool baseFields(const Instr &base, const std::vector<Footprint> &fp,
                std::array<int, InstrPlan::kMaxAccesses> &fieldOf) {
  fieldOf.fill(-1);
  const isa::InstrDesc &d = base.desc();
  std::vector<Footprint> moved;
  for (size_t f = 0; f < d.fields.size(); ++f) {
    if (!d.fields[f].isAddress())
      continue;
    std::array<bool, InstrPlan::kMaxAccesses> follows{};
    for (const int64_t delta : {int64_t{1}, int64_t{1} << 20}) {
      Instr in = base;
      in.value[f] += delta;
      moved.clear();
      footprint(in, moved);
      if (moved.size() != fp.size())
        return false;
      for (size_t j = 0; j < fp.size(); ++j) {
        Footprint expect = fp[j];
        const bool same = moved[j] == expect;
        expect.region.base += delta;
        if (!same && moved[j] != expect)
          return false;
        if (delta == 1)
          follows[j] = !same;
        else if (follows[j] == same)
          return false;
      }
    }
    for (size_t j = 0; j < fp.size(); ++j) {
      if (!follows[j])
        continue;
      if (fieldOf[j] >= 0)
        return false; // follows two fields
      fieldOf[j] = static_cast<int>(f);
    }
  }
  return true;
}

} // namespace

ComputeCost computeCost(const Instr &r, const CostModel &costs) {
  const InstrFields &fp = instrFields();
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

InstrPlan planInstr(const Instr &in, const CostModel &costs) {
  InstrPlan plan;
  const isa::InstrDesc &d = in.desc();
  // The instruction with every base register at r0 (which reads 0).
  Instr base = in;
  for (size_t f = 0; f < d.fields.size(); ++f)
    if (d.fields[f].isAddress()) {
      base.base[f] = 0;
      if (in.base[f] != 0)
        plan.addressFields[plan.addressCount++] = static_cast<uint8_t>(f);
    }
  if (operandErrorDependsOnAddresses(in.opcode) || !operandError(base).empty())
    return plan;
  std::vector<Footprint> fp;
  footprint(base, fp);
  std::array<int, InstrPlan::kMaxAccesses> fieldOf{};
  if (fp.size() > InstrPlan::kMaxAccesses || !baseFields(base, fp, fieldOf))
    return plan;
  for (size_t j = 0; j < fp.size(); ++j) {
    PlannedAccess &a = plan.accesses[j];
    a.footprint = fp[j];
    a.baseReg = fieldOf[j] >= 0 ? in.base[static_cast<size_t>(fieldOf[j])] : 0;
    a.lowOffset = fp[j].region.lowest() - fp[j].region.base;
    a.highOffset = fp[j].region.highest() - fp[j].region.base;
  }
  plan.accessCount = static_cast<uint8_t>(fp.size());
  if (isCompute(in.opcode))
    plan.compute = computeCost(base, costs);
  plan.planned = true;
  return plan;
}

InstrPlans::InstrPlans(const isa::Program &program, const CostModel &costs)
    : program_(program), costs_(costs), slots_(program.streams.size()) {
  for (size_t s = 0; s < slots_.size(); ++s)
    slots_[s].assign(program.streams[s].code.size(), kNeverRun);
}

const InstrPlan *InstrPlans::make(int stream, uint32_t pc) {
  uint32_t &slot = slots_[static_cast<size_t>(stream)][pc];
  InstrPlan plan =
      planInstr(program_.streams[static_cast<size_t>(stream)].code[pc], costs_);
  if (!plan.planned) {
    slot = kNoPlan;
    return nullptr;
  }
  plans_.push_back(plan);
  slot = kFirstPlan + static_cast<uint32_t>(plans_.size() - 1);
  return &plans_.back();
}

} // namespace spyre::sim
