// Happens-before tracking for the schedule checks: one vector clock per
// stream (FastTrack-style epochs). Two accesses race when neither happens
// before the other through program order, signal -> wait, send -> receive or
// a barrier; what the timing happened to do does not matter.
#pragma once

#include <cstdint>
#include <vector>

namespace spyre::sim {

/// A point in one stream's history: its clock value at an access, and which
/// instruction made it (for messages).
struct Epoch {
  uint32_t clock = 0;
  uint32_t instr = 0;
  uint16_t stream = 0;
};

using VectorClock = std::vector<uint32_t>;

class HappensBefore {
public:
  explicit HappensBefore(int numStreams);

  int numStreams() const { return static_cast<int>(clocks_.size()); }
  /// The stream's current epoch for an access by instruction `instr`.
  Epoch epoch(int stream, uint32_t instr) const {
    return {clocks_[stream][stream], instr, static_cast<uint16_t>(stream)};
  }
  /// Whether `e` happens before the current point of `stream`.
  bool happensBefore(const Epoch &e, int stream) const {
    return e.stream == stream || e.clock <= clocks_[stream][e.stream];
  }
  /// A release (signal, send, barrier arrival): returns the clock to hand to
  /// the matching acquire, then starts a new epoch in the stream.
  VectorClock release(int stream);
  /// The same, writing the clock into `out` (reusing its storage).
  void releaseInto(int stream, VectorClock &out);
  /// An acquire (wait, receive, barrier release): joins `vc` into the stream.
  void acquire(int stream, const VectorClock &vc);

private:
  std::vector<VectorClock> clocks_;
};

/// Join of two clocks (elementwise max), into `into`.
void joinInto(VectorClock &into, const VectorClock &from);

} // namespace spyre::sim
