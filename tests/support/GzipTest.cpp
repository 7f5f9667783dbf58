// gzipCompress against zlib's own reader (inflate with the gzip wrapper):
// what goes in comes back, and the same bytes give the same file. GzipSink
// against one deflate call over the whole input: the same bytes however
// the input is split.
#include "support/Gzip.h"

#include "support/FileIO.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

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

/// zlib in one call, apart from GzipSink: the whole input and an output
/// buffer deflateBound says is enough, with gzipCompress's settings.
std::string deflateWhole(const std::string &bytes) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

/// A trace-like text of about `bytes` bytes, with some random digits.
std::string traceLikeText(size_t bytes) {
  std::mt19937 rng(11);
  std::string text;
  while (text.size() < bytes)
    text += "{\"ph\":\"X\",\"name\":\"ld\",\"ts\":" +
            std::to_string(rng() % 100000) +
            ".250,\"args\":{\"instr\":\"ld [r1+0x10], 0x0\"}},\n";
  return text;
}

TEST(GzipSink, AnySplitGivesTheBytesOfOneDeflateOfTheWhole) {
  std::mt19937 rng(7);
  std::string random(200000, '\0');
  for (char &c : random)
    c = static_cast<char>(rng());
  for (const std::string &bytes :
       {std::string(), std::string("x"), traceLikeText(3 << 19), random}) {
    const std::string whole = deflateWhole(bytes);
    EXPECT_EQ(gzipCompress(bytes), whole);
    // Odd piece sizes, around deflate's 64 KiB window and the 1 MiB the
    // trace writer hands over, and a random mix.
    for (size_t piece : {size_t{1}, size_t{7}, size_t{4093}, size_t{65535},
                         size_t{65537}, (size_t{1} << 20) + 3, size_t{0}}) {
      StringSink out;
      GzipSink gz(out);
      for (size_t at = 0; at < bytes.size();) {
        const size_t n = piece != 0 ? piece : 1 + rng() % 100000;
        gz.write(std::string_view(bytes).substr(at, n));
        at += n;
      }
      gz.finish();
      EXPECT_EQ(out.text(), whole)
          << bytes.size() << " bytes in pieces of " << piece;
    }
  }
}

TEST(GzipSink, WritesAsItGoesNotAllAtTheEnd) {
  const std::string text = traceLikeText(8 << 20);
  StringSink out;
  GzipSink gz(out);
  gz.write(text);
  const size_t before = out.text().size();
  gz.finish();
  EXPECT_GT(before, 0u);
  EXPECT_LT(out.text().size() - before, out.text().size() / 2);
  EXPECT_EQ(gunzip(out.text()), text);
}

TEST(Gzip, WriteFileEncodedGzipsOnlyGzPaths) {
  const std::string dir = test::makeTempDir();
  auto produce = [](ByteSink &out) {
    out.write("{\"traceEvents\":[");
    out.write("]}\n");
  };
  writeFileEncoded(dir + "/t.json", produce);
  writeFileEncoded(dir + "/t.json.gz", produce);
  EXPECT_EQ(readFile(dir + "/t.json", kTextFileLimit),
            "{\"traceEvents\":[]}\n");
  EXPECT_EQ(readFile(dir + "/t.json.gz", kTextFileLimit),
            gzipCompress("{\"traceEvents\":[]}\n"));
}

} // namespace
} // namespace spyre
