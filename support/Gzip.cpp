#include "support/Gzip.h"

#include "support/Diagnostic.h"

#include <zlib.h>

#include <algorithm>
#include <array>

namespace spyre {

std::string gzipCompress(std::string_view bytes) {
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper with zlib's default header (time 0,
  // no name).
  const int init = deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16,
                                8, Z_DEFAULT_STRATEGY);
  SPYRE_ASSERT(init == Z_OK, "deflateInit2 failed");
  std::string out;
  std::array<char, size_t{1} << 16> buffer{};
  size_t offered = 0;
  int rc = Z_OK;
  do {
    // Fed in pieces: avail_in is 32 bits and a trace may be larger.
    if (z.avail_in == 0 && offered < bytes.size()) {
      const size_t piece = std::min<size_t>(bytes.size() - offered, size_t{1} << 30);
      z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data() + offered));
      z.avail_in = static_cast<uInt>(piece);
      offered += piece;
    }
    z.next_out = reinterpret_cast<Bytef *>(buffer.data());
    z.avail_out = static_cast<uInt>(buffer.size());
    rc = deflate(&z, offered == bytes.size() ? Z_FINISH : Z_NO_FLUSH);
    SPYRE_ASSERT(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR,
                 "deflate failed");
    out.append(buffer.data(), buffer.size() - z.avail_out);
  } while (rc != Z_STREAM_END);
  deflateEnd(&z);
  return out;
}

bool isGzipPath(std::string_view path) {
  return path.size() > 3 && path.substr(path.size() - 3) == ".gz";
}

std::string encodeForPath(std::string_view path, std::string bytes) {
  return isGzipPath(path) ? gzipCompress(bytes) : bytes;
}

} // namespace spyre
