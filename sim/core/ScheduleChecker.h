// The observer that checks a run's schedule as it goes: LX races and reads
// of LX never written (happens-before vector clocks over the LX shadow
// state, sim/check/), and loads of device memory never written. What it
// finds goes to the run's FindingLog.
//
// It is attached only when SimOptions::checks asks for it. The Machine's
// parts call it through a pointer that is null otherwise: a run without
// checks keeps no clocks, no shadow state and no written ranges, and pays
// one branch per call site (no virtual call). The bounds checks are not
// here: an access outside LX or device memory is never performed, checked
// or not, so those belong to the stream executor.
#pragma once

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/check/HappensBefore.h"
#include "sim/check/LxShadow.h"
#include "sim/check/WrittenRanges.h"
#include "sim/core/FindingLog.h"
#include "sim/core/Region.h"
#include "sim/core/StreamState.h"

#include <memory>
#include <span>
#include <vector>

namespace spyre::sim {

class ScheduleChecker {
public:
  ScheduleChecker(const hw::HwConfig &config, const isa::Program &program,
                  FindingLog &findings);

  /// Device-memory sticks [first, first + sticks) hold defined data.
  void markWritten(int64_t first, int64_t sticks) {
    written_.add(first, first + sticks);
  }

  /// The checks of the current instruction of `st`, whose footprint is in
  /// bounds. With `deferLxWrites` (a receive) its LX writes are checked
  /// when the data arrives (received()).
  void accessed(const StreamState &st, std::span<const Footprint> fp,
                bool deferLxWrites);
  /// The receive of `receiver` wrote `region` of core `core`'s LX at cycle
  /// `at`, after it acquired the sender's clock.
  void received(const StreamState &receiver, int core, const Region &region,
                Cycle at);
  /// A host op run by `st` reads the tensors `inputs` of device memory.
  void hostReads(const StreamState &st, const isa::HostOpDecl &op);

  /// Happens-before edges of the synchronisation: a release of `stream`'s
  /// clock (a signal's token, in recycled storage; a send; a barrier
  /// arrival), and its acquire by a stream that was released.
  VectorClock takeClock(int stream);
  VectorClock release(int stream) { return hb_.release(stream); }
  void acquire(int stream, const VectorClock &clock) {
    hb_.acquire(stream, clock);
  }
  /// A token's clock once its tokens are taken, for takeClock to reuse.
  void recycle(VectorClock &&clock) { clockPool_.push_back(std::move(clock)); }

private:
  /// The race and uninitialised-read checks of one LX region, its
  /// conflicts appended to conflicts_.
  void shadowAccess(int core, const Region &r, bool write, const Epoch &e);

  const isa::Program &program_;
  FindingLog &findings_;
  HappensBefore hb_;
  std::vector<VectorClock> clockPool_;
  LxShadow shadow_;
  WrittenRanges written_;
  std::vector<AccessConflict> conflicts_;
};

} // namespace spyre::sim
