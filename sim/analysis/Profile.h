// What a run did, instruction by instruction: the data the schedule analyses
// (sim/analysis/Summary.h, CriticalPath.h) work on, whether it comes from the
// simulator itself or is read back from a trace file. Its vocabulary (stall
// reasons, release edges) is the engine's too, in sim/timing/Stall.h.
#pragma once

#include "sim/timing/Stall.h"
#include "sim/timing/Time.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sim {

constexpr uint32_t kNoName = 0xFFFFFFFF;

/// One executed instruction (loop iterations count each time).
struct InstrRecord {
  uint32_t stream = 0;         ///< index into Profile::streams
  uint32_t index = 0;          ///< instruction index in its stream
  uint32_t mnemonic = kNoName; ///< index into Profile::names
  uint32_t op = kNoName;       ///< source op, index into Profile::names
  Cycle start = 0;             ///< the stream reached the instruction
  Cycle end = 0;               ///< it completed
  /// When what it waited for arrived: the token became visible, the peer
  /// posted, the barrier's last arrival. `start` when nothing released it.
  Cycle ready = 0;
  /// The record (index into Profile::records) whose signal, posting or
  /// arrival released it; -1 for none.
  int64_t releasedBy = -1;
  ReleaseEdge edge = ReleaseEdge::None;
  Cycle busy = 0;
  StallCycles stall{};
  /// Device-memory bytes (ld, st) or ring bytes (send, recv, rsend, racc).
  uint64_t bytes = 0;
  uint64_t macs = 0;   ///< mm, mmi8: m * k * n
  uint64_t sticks = 0; ///< SFU instructions: sticks processed
};

struct StreamInfo {
  int core = 0;
  std::string engine; ///< `dma.load`, `pt.0`, ...
};

/// A run's records and the figures the analyses need from its config.
struct Profile {
  std::string program;
  Cycle totalCycles = 0;
  double clockGhz = 1;
  /// DL16 MACs per cycle of one core's PT units, at full efficiency.
  double peakMacsPerCyclePerCore = 0;
  /// Device-memory interface peak, GB/s (the roofline's memory slope).
  double memoryPeakGbps = 0;
  std::vector<StreamInfo> streams;
  std::vector<std::string> names; ///< mnemonics and op names
  std::vector<InstrRecord> records;
  /// False when the records are a part of the run (a trace limited by
  /// --trace-window or --trace-cores).
  bool complete = true;

  /// The index of `name` in `names`, adding it when new.
  uint32_t intern(std::string_view name);
  std::string_view nameOf(uint32_t id) const;

private:
  std::map<std::string, uint32_t, std::less<>> nameIndex_;
};

/// What the analyses (Summary.h) read of one record: an InstrRecord with
/// its bandwidth stalls summed instead of the stall of each reason.
struct RecordView {
  uint32_t stream = 0;
  uint32_t mnemonic = kNoName;
  uint32_t op = kNoName;
  Cycle start = 0;
  Cycle end = 0;
  Cycle ready = 0;
  Cycle busy = 0;
  /// Cycles stalled on the memory channel, the rings and DMA slots.
  Cycle bandwidthStall = 0;
  int64_t releasedBy = -1;
  ReleaseEdge edge = ReleaseEdge::None;
  uint64_t bytes = 0;
  uint64_t macs = 0;
  uint64_t sticks = 0;
};

/// A run's records as the analyses read them, a block at a time: a
/// Profile's own, or the simulator's still in its log (read where they are,
/// so that the statistics of a long run make no copy of its records).
class RecordSource {
public:
  virtual ~RecordSource() = default;
  virtual size_t size() const = 0;
  /// Fills `out` with the records from `first` on; they exist.
  virtual void read(size_t first, std::span<RecordView> out) const = 0;
};

/// The records of a Profile as a source.
class ProfileRecords final : public RecordSource {
public:
  explicit ProfileRecords(const Profile &p) : p_(p) {}
  size_t size() const override { return p_.records.size(); }
  void read(size_t first, std::span<RecordView> out) const override;

private:
  const Profile &p_;
};

/// The engine kind of a stream name: `pt.0` -> `pt`, `dma.load` stays.
std::string_view engineKind(std::string_view engine);

} // namespace spyre::sim
