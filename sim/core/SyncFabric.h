// The synchronisation fabric of the chip: the counters of every core
// (signal and wait), the barriers, and the ring channels that match each
// send with its receive and time the transfer on the data or reduce ring.
//
// None of it depends on the order the streams are processed in: a signal's
// token carries the cycle it reaches the counter, a wait completes no
// earlier than the tokens it takes, and a barrier releases at its last
// arrival plus the release latency. Transfers need the ring's timeline in
// time order; the stream executor posts them only when their stream is the
// earliest event of the chip.
#pragma once

#include "isa/Instr.h"
#include "sim/check/HappensBefore.h"
#include "sim/core/Fifo.h"
#include "sim/core/Region.h"
#include "sim/core/RunState.h"
#include "sim/timing/Ring.h"

#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace spyre::sim {

class SyncFabric {
public:
  SyncFabric(RunState &run, Ring &dataRing, Ring &reduceRing);

  /// The instructions. Each returns whether its stream goes on (false: it
  /// blocked, and is released by another stream's instruction).
  void signal(StreamState &st, const isa::Instr &in);
  bool wait(StreamState &st, const isa::Instr &in);
  bool barrier(StreamState &st, const isa::Instr &in);
  /// send, recv, rsend, racc, `region` its LX region (`inBounds` false:
  /// reported, moves no data).
  bool transfer(StreamState &st, const isa::Instr &resolved,
                const Region &region, bool inBounds);

  /// The fewest cycles the ring transfer `resolved` of a stream on `core`
  /// can take after it is posted.
  Cycle leastTransferCycles(int core, const isa::Instr &resolved) const;

  /// Why the blocked stream `st` waits forever, for a deadlock finding.
  std::string blockedText(const StreamState &st) const;

private:
  /// 32 bytes with nothing to free: the signaller's clock, which only the
  /// checks keep, is in tokenClocks_.
  struct Token {
    int64_t amount = 0;
    Cycle visibleAt = 0;       ///< when the signal reaches the counter
    int64_t slice = -1;        ///< the signal's record (records only)
    int32_t core = 0;          ///< the signalling core
    uint32_t clock = kNoClock; ///< its index in tokenClocks_ (checks only)
  };
  static constexpr uint32_t kNoClock = ~uint32_t{0};
  /// The token a wait took last: the one that released it.
  struct Release {
    Cycle visible = 0;
    int core = 0;
    int64_t slice = -1;
  };
  struct Counter {
    int64_t available = 0;
    Fifo<Token> tokens; ///< ordered by visibleAt
    Fifo<int> waiters;  ///< stream indices, in blocking order
  };
  struct BarrierState {
    std::vector<int> arrived;
    VectorClock joined;
    Cycle lastArrival = 0;
  };
  struct TransferPost {
    int stream = 0;
    Cycle time = 0;
    Region region;
    VectorClock clock;    ///< sender's release (sends, checks only)
    bool inBounds = true; ///< false: reported, moves no data
  };
  struct Channel {
    std::deque<TransferPost> sends;
    std::deque<TransferPost> recvs;
  };

  Counter &counterOf(int core, int counter);
  const Counter &counterOf(int core, int counter) const;
  /// Takes `need` tokens for `stream`; returns the latest of them.
  Release takeTokens(Counter &c, int64_t need, int stream);
  /// The stall reason of waiting for a token from `r.core`.
  static StallReason waitReason(const StreamState &st, const Release &r) {
    return r.core == st.core ? StallReason::Signal : StallReason::RemoteSignal;
  }
  void wake(StreamState &st, const Release &release);
  void matchTransfers(Channel &ch, bool reduce, int srcCore, int dstCore);

  int hops(int coreA, int coreB) const;
  Cycle signalLatency(int fromCore, int toCore) const;
  Cycle barrierLatency() const;

  RunState &run_;
  Ring &dataRing_;
  Ring &reduceRing_;
  const Cycle syncCycles_;
  std::vector<Counter> counters_; ///< core * countersPerCore + c
  /// The clocks of tokens not yet taken, and the free places among them.
  std::vector<VectorClock> tokenClocks_;
  std::vector<uint32_t> freeClocks_;
  std::vector<BarrierState> barriers_;
  /// (reduce ring?, source core, destination core) -> pending transfers.
  std::map<std::tuple<bool, int, int>, Channel> channels_;
};

} // namespace spyre::sim
