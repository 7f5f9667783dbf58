// Happens-before race detection, uninitialised reads and written-range
// tracking, on hand-built access sequences.
#include "sim/check/HappensBefore.h"
#include "sim/check/LxShadow.h"
#include "sim/check/WrittenRanges.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

using namespace spyre::sim;

namespace {
struct Fixture {
  HappensBefore hb{3};
  LxShadow lx{1, 64};
  std::vector<AccessConflict> out;
  void access(int stream, uint32_t instr, int64_t first, int64_t count,
              bool write) {
    lx.access(0, first, count, write, hb.epoch(stream, instr), hb, out);
  }
};
} // namespace

TEST(LxShadow, SameStreamNeverRaces) {
  Fixture f;
  f.access(0, 0, 0, 8, true);
  f.access(0, 1, 0, 8, false);
  f.access(0, 2, 4, 8, true);
  EXPECT_TRUE(f.out.empty());
}

TEST(LxShadow, UnorderedWriteThenReadIsARace) {
  Fixture f;
  f.access(0, 5, 0, 8, true);
  f.access(1, 9, 6, 4, false);
  ASSERT_EQ(f.out.size(), 2u); // a race on 6..7 and an uninitialised 8..9
  EXPECT_EQ(f.out[0].kind, AccessConflict::Kind::Race);
  EXPECT_EQ(f.out[0].firstStick, 6);
  EXPECT_EQ(f.out[0].lastStick, 7);
  EXPECT_EQ(f.out[0].other.stream, 0);
  EXPECT_EQ(f.out[0].other.instr, 5u);
  EXPECT_TRUE(f.out[0].otherWasWrite);
  EXPECT_EQ(f.out[1].kind, AccessConflict::Kind::UninitRead);
  EXPECT_EQ(f.out[1].firstStick, 8);
  EXPECT_EQ(f.out[1].lastStick, 9);
}

TEST(LxShadow, SignalWaitOrdersTheAccesses) {
  Fixture f;
  f.access(0, 0, 0, 8, true);
  VectorClock token = f.hb.release(0); // signal
  f.hb.acquire(1, token);              // wait
  f.access(1, 0, 0, 8, false);
  EXPECT_TRUE(f.out.empty());
}

TEST(LxShadow, AccessAfterTheSignalIsNotCovered) {
  Fixture f;
  VectorClock token = f.hb.release(0);
  f.access(0, 3, 0, 1, true); // written after the signal: not ordered
  f.hb.acquire(1, token);
  f.access(1, 0, 0, 1, false);
  ASSERT_EQ(f.out.size(), 1u);
  EXPECT_EQ(f.out[0].kind, AccessConflict::Kind::Race);
}

TEST(LxShadow, WriteAfterUnorderedReadIsARace) {
  Fixture f;
  f.access(0, 0, 0, 1, true);
  VectorClock t = f.hb.release(0);
  f.hb.acquire(1, t);
  f.hb.acquire(2, t);
  f.access(1, 1, 0, 1, false); // reader, ordered after the write
  f.access(2, 2, 0, 1, true);  // second writer, not ordered after the read
  ASSERT_EQ(f.out.size(), 1u);
  EXPECT_EQ(f.out[0].other.stream, 1);
  EXPECT_FALSE(f.out[0].otherWasWrite);
}

TEST(LxShadow, TransitiveOrderingThroughAThirdStream) {
  Fixture f;
  f.access(0, 0, 0, 2, true);
  f.hb.acquire(1, f.hb.release(0));
  f.hb.acquire(2, f.hb.release(1));
  f.access(2, 0, 0, 2, true);
  EXPECT_TRUE(f.out.empty());
}

namespace {

/// The shadow kept stick by stick: what LxShadow's runs must agree with.
class StickShadow {
public:
  explicit StickShadow(int64_t sticks) : cells_(static_cast<size_t>(sticks)) {}

  void access(int64_t first, int64_t count, bool isWrite, const Epoch &e,
              const HappensBefore &hb, std::vector<AccessConflict> &out) {
    std::optional<AccessConflict> race, uninit;
    auto note = [&](int64_t s, const Epoch &other, bool wasWrite) {
      if (!race)
        race = AccessConflict{AccessConflict::Kind::Race, s, s, other, wasWrite};
      else if (race->lastStick == s - 1 && race->other.stream == other.stream &&
               race->other.instr == other.instr)
        race->lastStick = s;
    };
    for (int64_t s = first; s < first + count; ++s) {
      Cell &c = cells_[static_cast<size_t>(s)];
      if (c.written && !hb.happensBefore(c.write, e.stream))
        note(s, c.write, true);
      if (isWrite) {
        for (const Epoch &r : c.reads)
          if (!hb.happensBefore(r, e.stream)) {
            note(s, r, false);
            break;
          }
        c.write = e;
        c.written = true;
        c.reads.clear();
        continue;
      }
      if (!c.written) {
        if (!uninit)
          uninit = AccessConflict{AccessConflict::Kind::UninitRead, s, s, {}, false};
        else if (uninit->lastStick == s - 1)
          uninit->lastStick = s;
      }
      bool replaced = false;
      for (Epoch &r : c.reads)
        if (r.stream == e.stream) {
          r = e;
          replaced = true;
          break;
        }
      if (!replaced)
        c.reads.push_back(e);
    }
    if (race)
      out.push_back(*race);
    if (uninit)
      out.push_back(*uninit);
  }

private:
  struct Cell {
    Epoch write;
    bool written = false;
    std::vector<Epoch> reads;
  };
  std::vector<Cell> cells_;
};

} // namespace

TEST(LxShadow, FindsWhatAStickByStickWalkFinds) {
  // Random accesses (single runs and rows of runs) by four streams with
  // random signal/wait edges: every conflict (kind, sticks, other access)
  // must be the walk's, however often the epoch table is compacted.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    constexpr int kStreams = 4;
    constexpr int64_t kSticks = 300; // blocks of 64 sticks, and a partial one
    HappensBefore hb{kStreams};
    // A table of a few epochs: compacted again and again.
    LxShadow runs{2, kSticks, 8};
    StickShadow sticks{kSticks};
    std::vector<AccessConflict> a, b;
    for (uint32_t step = 0; step < 300; ++step) {
      const int stream = static_cast<int>(rng() % kStreams);
      if (rng() % 6 == 0) {
        hb.acquire(static_cast<int>(rng() % kStreams), hb.release(stream));
        continue;
      }
      int64_t first = static_cast<int64_t>(rng() % kSticks);
      int64_t count =
          1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(
                                              std::min<int64_t>(trial % 2 ? 24 : 150, kSticks - first)));
      // Every third trial, half the accesses cover whole blocks (tiles that
      // several engines read: a block keeps its readers' list), the others
      // split them again.
      if (trial % 3 == 2 && rng() % 2 == 0) {
        first = first / 64 * 64;
        count = std::min<int64_t>(64 * (1 + static_cast<int64_t>(rng() % 2)),
                                  kSticks - first);
      }
      const bool write = rng() % 3 == 0;
      const Epoch e = hb.epoch(stream, step % 5); // instructions repeat
      // Sometimes several runs of one row: ascending apart, touching or
      // overlapping, as far as they fit.
      const int64_t stride = static_cast<int64_t>(rng() % 3) - 1 + count;
      int64_t n = 1 + static_cast<int64_t>(rng() % 4);
      while (n > 1 && (stride <= 0 || first + (n - 1) * stride + count > kSticks))
        --n;
      runs.accessRuns(1, first, count, n, stride, write, e, hb, a);
      for (int64_t k = 0; k < n; ++k)
        sticks.access(first + k * stride, count, write, e, hb, b);
      ASSERT_EQ(a.size(), b.size()) << "trial " << trial << " step " << step;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].kind, b[i].kind);
        EXPECT_EQ(a[i].firstStick, b[i].firstStick);
        EXPECT_EQ(a[i].lastStick, b[i].lastStick);
        EXPECT_EQ(a[i].other.stream, b[i].other.stream);
        EXPECT_EQ(a[i].other.instr, b[i].other.instr);
        EXPECT_EQ(a[i].otherWasWrite, b[i].otherWasWrite);
      }
      a.clear();
      b.clear();
    }
  }
}

TEST(WrittenRanges, MergesAndFindsGaps) {
  WrittenRanges w;
  w.add(10, 20);
  w.add(30, 40);
  w.add(20, 25); // touches the first: merged
  EXPECT_EQ(w.intervals(), 2u);
  EXPECT_FALSE(w.firstGap(10, 25));
  auto gap = w.firstGap(12, 35);
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->first, 25);
  EXPECT_EQ(gap->second, 30);
  gap = w.firstGap(0, 5);
  ASSERT_TRUE(gap);
  EXPECT_EQ(*gap, std::make_pair(int64_t(0), int64_t(5)));
  w.add(0, 100);
  EXPECT_EQ(w.intervals(), 1u);
  EXPECT_FALSE(w.firstGap(0, 100));
}
