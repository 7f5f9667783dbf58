// Where the Machine's parts report what they find: the findings of a run in
// the order they were found, each naming the stream and instruction it is
// about (Findings.h). A broken program could find millions; the log keeps
// the first kMaxFindings and counts the rest.
#pragma once

#include "isa/Program.h"
#include "sim/core/Findings.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre::sim {

struct StreamState;

class FindingLog {
public:
  static constexpr size_t kMaxFindings = 1000;

  explicit FindingLog(const isa::Program &program) : program_(program) {}

  /// A finding about the current instruction of `st` (chip-wide when null).
  void report(FindingKind kind, const StreamState *st, Cycle cycle,
              std::string message, std::string range = {},
              std::string conflicting = {});

  /// `core 0 sfu.1 #5 (add ...) [op name]`: an instruction a finding refers to.
  std::string describeInstr(int stream, uint32_t instr) const;

  const std::vector<Finding> &findings() const { return findings_; }
  uint64_t dropped() const { return dropped_; }

private:
  const isa::Program &program_;
  std::vector<Finding> findings_;
  uint64_t dropped_ = 0;
};

/// `lx[0x40, 0x48) sticks`: the sticks first..last (inclusive) of a space.
std::string sticksText(const char *space, int64_t first, int64_t last);

/// The message of a max-cycles finding for `work` that cannot end before
/// the limit: it takes at least `least` cycles from cycle `from`.
std::string pastCycleLimitText(Cycle limit, const std::string &work,
                               Cycle least, Cycle from);

} // namespace spyre::sim
