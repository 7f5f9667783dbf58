#include "support/Hash.h"

#include <gtest/gtest.h>

using namespace spyre;

// Check values published with each algorithm's definition.
TEST(Hash, Crc32MatchesStandardCheckValue) {
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32("", 0), 0u);
}

TEST(Hash, Fnv1a64MatchesReferenceVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(Hash, Fnv1a64IsIncremental) {
  Fnv1a64 h;
  h.update("foo");
  h.update("bar");
  EXPECT_EQ(h.digest(), fnv1a64("foobar"));
}

TEST(Hash, ToHexPadsToWidth) {
  EXPECT_EQ(toHex(0xab, 4), "00ab");
  EXPECT_EQ(toHex(0x7fff, 4), "7fff");
  EXPECT_EQ(toHex(0x0123456789abcdefULL, 16), "0123456789abcdef");
}
