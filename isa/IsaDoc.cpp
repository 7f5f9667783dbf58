// Generator of docs/isa.md: fixed prose about the machine model, then one
// section per instruction built from its table row (syntax, engines, timing
// class, semantics, and the bit layout of its fields).
#include "isa/IsaDoc.h"

#include "isa/InstrTable.h"
#include "isa/Program.h"
#include "support/Hash.h"

#include <vector>

namespace spyre::isa {

namespace {

const char *const kIntro = R"(# Spyre instruction set reference

<!-- Generated from the instruction table (isa/InstrTable.cpp) by
     spyre-isa-doc; do not edit. Regenerate with
     `build/isa/spyre-isa-doc -o docs/isa.md`. A test fails when this file
     and the table disagree. -->

This is the instruction set the Spyre toolchain compiles to and simulates. The
real chip's ISA is not public; this one is defined in the spirit of the
hardware (see docs/assembly.md for the assembly syntax and
docs/program-file.md for the program file).

## Machine model

- **Streams.** Each core has one in-order instruction stream per engine
  instance: `dma.load` (device memory to LX), `dma.store` (LX to device
  memory), `pt.N` (matrix unit of corelet N), `sfu.N` (vector unit of corelet
  N) and `ring` (data ring and reduce ring). Engines run concurrently. Within
  a stream, an instruction sees the results of the instructions before it;
  between streams nothing is ordered unless `signal`/`wait` or `barrier` says
  so.
- **Registers.** Each stream has 16 32-bit integer registers r0..r15. r0
  always reads 0 and is not a valid destination. Registers hold addresses in
  sticks and change only through `li`, `addi` and `lr`; `lr` takes a value
  from LX at run time (an index such as a token id, bounds-checked), so an
  address can depend on data.
- **Sticks.** The data unit is the 128-byte stick: 64 DL16, 32 FP32 or INT32,
  128 INT8 elements. Every address counts sticks.
- **Addresses.** An address operand is a base register plus a signed offset,
  written `[rN+imm]`, `[rN-imm]`, `[rN]` or a bare immediate (base r0). The
  effective address is computed when the instruction runs. LX offsets are 20
  bits, memory offsets 32 bits; the assembler checks |offset| against the LX
  and memory sizes of the config.
- **Timing.** Latency is not part of the ISA: each instruction names a timing
  class, and the hardware config maps classes to cycles and bandwidths.

## Instruction word

Every instruction is 32 bytes (256 bits), little-endian. Bits [0, 8) hold the
opcode; opcode 0 is invalid so zeroed memory never decodes. The operand fields
follow LSB-first in the order listed for each instruction, each with its width;
an address field is its 4-bit base register followed by its offset. Signed
fields are two's complement. Every bit after the last field is reserved and
must be zero; the decoder rejects a word with an unknown opcode, a reserved bit
set or a field outside its range.

Fields are written in assembly either positionally (required, in order), as a
required keyword (`m=16`), or as an optional keyword with a default (`run=4`).
Defaults that name another field (`as=m`) take that field's value; `ds=row`
of `cvt` is the destination row length, ceil(n * srcLanes / dstLanes).

## The table

Each instruction is described once. `isa/Opcodes.def` gives every opcode its
number, mnemonic, family (what it does: the simulator dispatches on it) and
operand format; `isa/Formats.def` lists each format's fields in encoding
order, with the field names of `isa/Fields.def`; the table
(`isa/InstrTable.cpp`) gives each row its engines, timing class and the
width, range, default and meaning of each field, and checks that the row's
fields are its format's. The encoder, decoder, assembler, disassembler and
this page read the table. The compiler builds instructions through setters
generated from the same lists (`codegen::instr<Opcode::Ld>().lx(...)`), and
the simulator reads fields by `isa::Field`, so code names instructions and
fields only in ways the compiler checks; adding an instruction is a line in
Opcodes.def (and in Formats.def for a new operand list) and a row in the
table.

)";

/// Text safe inside a Markdown table cell.
std::string cell(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += '\\';
    out += c;
  }
  return out;
}

std::string bitRange(int first, int last) {
  if (first == last)
    return std::to_string(first);
  return std::to_string(first) + "-" + std::to_string(last);
}

std::string bitsText(int width) {
  return std::to_string(width) + (width == 1 ? " bit" : " bits");
}

std::string hex2(unsigned v) { return "0x" + toHex(v, 2); }

std::string groupTitle(EngineSet engines) {
  if (engines == kAllEngines)
    return "Control (every engine)";
  if (engines == engineBit(Engine::DmaLoad) ||
      engines == engineBit(Engine::DmaStore))
    return "DMA";
  if (engines == engineBit(Engine::Pt))
    return "PT (matrix unit)";
  if (engines == engineBit(Engine::Sfu))
    return "SFU (vector unit)";
  if (engines == engineBit(Engine::Ring))
    return "Ring";
  return engineSetName(engines);
}

std::string formText(const FieldDesc &f) {
  switch (f.form) {
  case FieldForm::Positional:
    return "positional";
  case FieldForm::Keyword:
    return "keyword";
  case FieldForm::Optional:
    return "optional";
  }
  return "";
}

void fieldTable(std::string &out, const InstrDesc &d) {
  out += "| Bits | Field | Kind | Form | Valid values | Default | Meaning |\n";
  out += "|---|---|---|---|---|---|---|\n";
  out += "| 0-7 | opcode | | | " + hex2(static_cast<uint8_t>(d.opcode)) +
         " | | |\n";
  int pos = kOpcodeBits;
  for (const FieldDesc &f : d.fields) {
    int bits = f.encodedBits();
    std::string kind(fieldKindName(f.kind));
    if (f.isAddress())
      kind += " (base register: 4 bits, offset: signed " +
              bitsText(f.width) + ")";
    else if (f.kind == FieldKind::Int || f.kind == FieldKind::Core ||
             f.kind == FieldKind::Counter || f.kind == FieldKind::LoopEnd)
      kind += std::string(f.isSigned ? ", signed " : ", unsigned ") +
              bitsText(f.width);
    else
      kind += ", " + bitsText(f.width);
    std::string range = fieldRangeText(f);
    if (f.isAddress())
      range = "";
    if (f.limit != Limit::None)
      range += (range.empty() ? "" : "; ") + std::string(limitDescription(f.limit));
    out += "| " + bitRange(pos, pos + bits - 1) + " | `" +
           std::string(f.name) + "` | " + cell(kind) + " | " + formText(f) +
           " | " + cell(range) + " | " + cell(fieldDefaultText(f)) + " | " +
           cell(std::string(f.description)) + " |\n";
    pos += bits;
  }
  out += "| " + bitRange(pos, kWordBits - 1) + " | reserved | | | 0 | | |\n";
}

} // namespace

std::string isaReferenceMarkdown() {
  std::string out = kIntro;

  out += "## Timing classes\n\n";
  for (int t = 0; t < kNumTimingClasses; ++t) {
    out += t ? ", " : "";
    out += "`" + std::string(timingClassName(static_cast<TimingClass>(t))) +
           "`";
  }
  out += ".\n\n";

  out += "## Opcode map\n\n";
  out += "| Opcode | Mnemonic | Engines | Timing class | Summary |\n";
  out += "|---|---|---|---|---|\n";
  for (const InstrDesc &d : instructionTable())
    out += "| " + hex2(static_cast<uint8_t>(d.opcode)) + " | [`" +
           std::string(d.mnemonic) + "`](#" + std::string(d.mnemonic) +
           ") | " + engineSetName(d.engines) + " | `" +
           std::string(timingClassName(d.timing)) + "` | " + cell(d.summary) +
           " |\n";

  std::string group;
  for (const InstrDesc &d : instructionTable()) {
    std::string title = groupTitle(d.engines);
    if (title != group) {
      out += "\n## " + title + "\n";
      group = title;
    }
    out += "\n### " + std::string(d.mnemonic) + "\n\n";
    out += d.summary + "\n\n";
    out += "- Syntax: `" + d.syntax() + "`\n";
    out += "- Opcode: " + hex2(static_cast<uint8_t>(d.opcode)) + " (`" +
           std::string(opcodeName(d.opcode)) + "`)\n";
    out += "- Engines: " + engineSetName(d.engines) + "\n";
    out += "- Timing class: `" + std::string(timingClassName(d.timing)) +
           "`\n";
    out += "- Encoded bits: " + std::to_string(d.encodedBits()) + " of " +
           std::to_string(kWordBits) + "\n\n";
    out += d.semantics + "\n\n";
    fieldTable(out, d);
  }
  return out;
}

} // namespace spyre::isa
