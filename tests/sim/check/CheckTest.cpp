// Happens-before race detection, uninitialised reads and written-range
// tracking, on hand-built access sequences.
#include "sim/check/HappensBefore.h"
#include "sim/check/LxShadow.h"
#include "sim/check/WrittenRanges.h"

#include <gtest/gtest.h>

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
