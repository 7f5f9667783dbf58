// The Machine's queue of events, ordered by (time, core, stream, sequence
// number) and never by host or SystemC process order, so that a run gives
// the same cycles, numbers and findings every time.
#pragma once

#include "sim/timing/Time.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spyre::sim {

enum class EventKind : uint8_t {
  Step,     ///< a stream runs from its pc
  DmaBurst, ///< a DMA engine issues its next bursts
};

/// 16 bytes, compared as one 128-bit integer: the heap is the hot path of
/// programs whose streams interact often. `order` packs, from the top: core
/// (16 bits), stream (16 bits), sequence number (31 bits), kind (1).
struct Event {
  Cycle time = 0;
  uint64_t order = 0;

  int core() const { return static_cast<int>(order >> 48); }
  int stream() const { return static_cast<int>((order >> 32) & 0xFFFF); }
  EventKind kind() const { return static_cast<EventKind>(order & 1); }
  __extension__ using Key = unsigned __int128;
  /// (time, order) as one number: events compare as their keys.
  Key key() const { return static_cast<Key>(time) << 64 | order; }
};

/// A binary min-heap of events by key. Keys are unique (the sequence number
/// tells apart the events of one stream at one cycle), so the order events
/// leave the queue is fully determined by their keys.
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
    const Event e{time,
                  orderKey(core, stream) | seq | static_cast<uint64_t>(kind)};
    const Event::Key key = e.key();
    size_t hole = heap_.size();
    heap_.push_back(e);
    while (hole > 0) {
      const size_t parent = (hole - 1) / 2;
      if (heap_[parent].key() < key)
        break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }
  bool empty() const { return heap_.empty(); }
  const Event &top() const { return heap_.front(); }
  void pop() {
    const Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0)
      return;
    const Event::Key key = last.key();
    size_t hole = 0;
    for (;;) {
      size_t child = 2 * hole + 1;
      if (child >= n)
        break;
      if (child + 1 < n && heap_[child + 1].key() < heap_[child].key())
        ++child;
      if (key < heap_[child].key())
        break;
      heap_[hole] = heap_[child];
      hole = child;
    }
    heap_[hole] = last;
  }

  /// Whether a stream at `time` comes before every queued event.
  bool isEarliest(Cycle time, int core, int stream) const {
    if (heap_.empty())
      return true;
    const Event &t = heap_.front();
    return time < t.time || (time == t.time && orderKey(core, stream) <
                                                   (t.order & ~0xFFFFFFFFull));
  }

private:
  std::vector<Event> heap_;
  uint64_t seq_ = 0;
};

} // namespace spyre::sim
