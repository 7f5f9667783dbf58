// gzipCompress against zlib's own reader (inflate with the gzip wrapper):
// what goes in comes back, and the same bytes give the same file.
#include "support/Gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

namespace spyre {
namespace {

std::string gunzip(const std::string &gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buffer[4096];
  int rc = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef *>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      ADD_FAILURE() << "inflate: " << rc;
      break;
    }
    out.append(buffer, sizeof buffer - z.avail_out);
  } while (rc != Z_STREAM_END);
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the gzip member";
  inflateEnd(&z);
  return out;
}

TEST(Gzip, RoundTripsEmptyTextAndRandomBytes) {
  std::mt19937 rng(7);
  std::string random(300000, '\0');
  for (char &c : random)
    c = static_cast<char>(rng());
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += "{\"ph\":\"X\",\"ts\":" + std::to_string(i) + "},\n";
  for (const std::string &bytes : {std::string(), std::string("x"), text, random})
    EXPECT_EQ(gunzip(gzipCompress(bytes)), bytes) << bytes.size() << " bytes";
  // Repetitive text compresses well; random bytes grow by little.
  EXPECT_LT(gzipCompress(text).size() * 5, text.size());
  EXPECT_LT(gzipCompress(random).size(), random.size() + 1000);
}

TEST(Gzip, HeaderHasNoTimeSoTheBytesAreTheSameEveryRun) {
  const std::string gz = gzipCompress("same bytes");
  ASSERT_GE(gz.size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(gz.substr(4, 4), std::string(4, '\0')) << "MTIME must be 0";
  EXPECT_EQ(gzipCompress("same bytes"), gz);
}

TEST(Gzip, OnlyPathsEndingInGzAreCompressed) {
  EXPECT_TRUE(isGzipPath("t.json.gz"));
  EXPECT_FALSE(isGzipPath("t.json"));
  EXPECT_FALSE(isGzipPath(".gz"));
  EXPECT_FALSE(isGzipPath("t.gzip"));
  EXPECT_EQ(encodeForPath("t.json", "abc"), "abc");
  EXPECT_EQ(gunzip(encodeForPath("t.json.gz", "abc")), "abc");
}

} // namespace
} // namespace spyre
