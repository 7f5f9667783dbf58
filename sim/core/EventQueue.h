// The Machine's queue of events, ordered by (time, core, stream, sequence
// number) and never by host or SystemC process order, so that a run gives
// the same cycles, numbers and findings every time.
#pragma once

#include "sim/timing/Time.h"

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace spyre::sim {

enum class EventKind : uint8_t {
  Step,     ///< a stream runs from its pc
  DmaBurst, ///< a DMA engine issues its next bursts
};

/// 16 bytes, compared as two integers: the heap is the hot path of programs
/// whose streams interact often. `order` packs, from the top: core (16
/// bits), stream (16 bits), sequence number (31 bits), kind (1).
struct Event {
  Cycle time = 0;
  uint64_t order = 0;

  int core() const { return static_cast<int>(order >> 48); }
  int stream() const { return static_cast<int>((order >> 32) & 0xFFFF); }
  EventKind kind() const { return static_cast<EventKind>(order & 1); }
  bool operator>(const Event &o) const {
    return time != o.time ? time > o.time : order > o.order;
  }
};

class EventQueue {
public:
  /// The `order` an event of `stream` on `core` would have, sequence 0.
  static uint64_t orderKey(int core, int stream) {
    return static_cast<uint64_t>(core) << 48 | static_cast<uint64_t>(stream)
                                                   << 32;
  }

  void push(EventKind kind, Cycle time, int core, int stream) {
    // The sequence number only orders events of one stream at one cycle; 31
    // bits of it are kept (wrapping is deterministic too).
    const uint64_t seq = (seq_++ & 0x7FFFFFFFu) << 1;
    heap_.push(Event{time, orderKey(core, stream) | seq |
                               static_cast<uint64_t>(kind)});
  }
  bool empty() const { return heap_.empty(); }
  const Event &top() const { return heap_.top(); }
  void pop() { heap_.pop(); }

  /// Whether a stream at `time` comes before every queued event.
  bool isEarliest(Cycle time, int core, int stream) const {
    if (heap_.empty())
      return true;
    const Event &t = heap_.top();
    return time < t.time || (time == t.time && orderKey(core, stream) <
                                                   (t.order & ~0xFFFFFFFFull));
  }

private:
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
  uint64_t seq_ = 0;
};

} // namespace spyre::sim
