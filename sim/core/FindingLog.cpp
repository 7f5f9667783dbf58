// The findings of a run (FindingLog.h).
#include "sim/core/FindingLog.h"

#include "sim/core/StreamState.h"

namespace spyre::sim {

std::string sticksText(const char *space, int64_t first, int64_t last) {
  // last + 1 in signed arithmetic wraps when a footprint reaches the
  // largest int64; the end of a range that far out is printed unsigned.
  const std::string end =
      last >= 0 ? isa::hexTextUnsigned(static_cast<uint64_t>(last) + 1)
                : isa::hexText(last + 1);
  return std::string(space) + "[" + isa::hexText(first) + ", " + end +
         ") sticks";
}

std::string pastCycleLimitText(Cycle limit, const std::string &work,
                               Cycle least, Cycle from) {
  return "the run passed --max-cycles " + std::to_string(limit) + ": " + work +
         " cannot end before it (at least " + std::to_string(least) +
         " cycles from cycle " + std::to_string(from) + ")";
}

std::string FindingLog::describeInstr(int stream, uint32_t instr) const {
  const isa::Stream &s = program_.streams[static_cast<size_t>(stream)];
  std::string out = s.name() + " #" + std::to_string(instr);
  if (instr < s.code.size()) {
    out += " (" + isa::formatInstr(s.code[instr]) + ")";
    if (const std::string *op = program_.provenanceOf(s, instr))
      out += " [op " + *op + "]";
  }
  return out;
}

void FindingLog::report(FindingKind kind, const StreamState *st, Cycle cycle,
                        std::string message, std::string range,
                        std::string conflicting) {
  // Keep the report readable: a broken loop could produce millions.
  if (findings_.size() >= kMaxFindings) {
    ++dropped_;
    return;
  }
  Finding f;
  f.kind = kind;
  f.cycle = cycle;
  if (st) {
    f.core = st->core;
    f.stream = st->code->name();
    f.instrIndex = st->pc;
    if (st->pc < st->code->code.size()) {
      f.instrText = isa::formatInstr(st->code->code[st->pc]);
      if (const std::string *op = program_.provenanceOf(*st->code, st->pc))
        f.sourceOp = *op;
    }
  }
  f.message = std::move(message);
  f.addressRange = std::move(range);
  f.conflicting = std::move(conflicting);
  findings_.push_back(std::move(f));
}

} // namespace spyre::sim
