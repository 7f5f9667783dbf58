#include "support/Gzip.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <zlib.h>

#include <algorithm>
#include <array>

namespace spyre {

struct GzipSink::Deflater {
  z_stream z{};
  std::array<char, size_t{1} << 16> buffer{};
};

GzipSink::GzipSink(ByteSink &out)
    : z_(std::make_unique<Deflater>()), out_(out) {
  // windowBits 15 + 16: a gzip wrapper with zlib's default header (time 0,
  // no name).
  const int init = deflateInit2(&z_->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
                                15 + 16, 8, Z_DEFAULT_STRATEGY);
  SPYRE_ASSERT(init == Z_OK, "deflateInit2 failed");
}

GzipSink::~GzipSink() { deflateEnd(&z_->z); }

void GzipSink::write(std::string_view bytes) {
  SPYRE_ASSERT(!finished_, "a write to a finished gzip stream");
  z_stream &z = z_->z;
  while (!bytes.empty()) {
    // Fed in pieces: avail_in is 32 bits and a trace may be larger.
    const size_t piece = std::min<size_t>(bytes.size(), size_t{1} << 30);
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
    z.avail_in = static_cast<uInt>(piece);
    bytes.remove_prefix(piece);
    do {
      z.next_out = reinterpret_cast<Bytef *>(z_->buffer.data());
      z.avail_out = static_cast<uInt>(z_->buffer.size());
      const int rc = deflate(&z, Z_NO_FLUSH);
      SPYRE_ASSERT(rc == Z_OK || rc == Z_BUF_ERROR, "deflate failed");
      if (const size_t made = z_->buffer.size() - z.avail_out; made > 0)
        out_.write(std::string_view(z_->buffer.data(), made));
    } while (z.avail_in > 0 || z.avail_out == 0);
  }
}

void GzipSink::finish() {
  SPYRE_ASSERT(!finished_, "a gzip stream finished twice");
  finished_ = true;
  z_stream &z = z_->z;
  int rc = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef *>(z_->buffer.data());
    z.avail_out = static_cast<uInt>(z_->buffer.size());
    rc = deflate(&z, Z_FINISH);
    SPYRE_ASSERT(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR,
                 "deflate failed");
    if (const size_t made = z_->buffer.size() - z.avail_out; made > 0)
      out_.write(std::string_view(z_->buffer.data(), made));
  } while (rc != Z_STREAM_END);
}

std::string gzipCompress(std::string_view bytes) {
  StringSink out;
  GzipSink gz(out);
  gz.write(bytes);
  gz.finish();
  return out.take();
}

bool isGzipPath(std::string_view path) {
  return path.size() > 3 && path.substr(path.size() - 3) == ".gz";
}

std::string encodeForPath(std::string_view path, std::string bytes) {
  return isGzipPath(path) ? gzipCompress(bytes) : bytes;
}

void writeFileEncoded(const std::string &path,
                      const std::function<void(ByteSink &)> &produce) {
  if (!isGzipPath(path)) {
    writeFileStreamed(path, produce);
    return;
  }
  writeFileStreamed(path, [&](ByteSink &file) {
    GzipSink gz(file);
    produce(gz);
    gz.finish();
  });
}

} // namespace spyre
