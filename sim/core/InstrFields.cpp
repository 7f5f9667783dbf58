// Field positions from the ISA table (InstrFields.h).
#include "sim/core/InstrFields.h"

#include "support/Diagnostic.h"

namespace spyre::sim {

using isa::Opcode;

InstrFields::InstrFields() {
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

uint64_t rowSticksOf(const isa::Instr &r) {
  const InstrFields &fp = instrFields();
  const int nf = fp.rowSticks[static_cast<size_t>(r.opcode)],
            mf = fp.rows[static_cast<size_t>(r.opcode)];
  return static_cast<uint64_t>(nf >= 0 ? r[static_cast<size_t>(nf)] : 1) *
         static_cast<uint64_t>(mf >= 0 ? r[static_cast<size_t>(mf)] : 1);
}

} // namespace spyre::sim
