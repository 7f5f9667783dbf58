// Gzip (RFC 1952) for files users ask for compressed: `--trace t.json.gz`.
// Perfetto UI and chrome://tracing open gzip traces directly.
#pragma once

#include "support/ByteSink.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace spyre {

/// `bytes` as one gzip member. The header holds no time stamp and no file
/// name, so the same bytes give the same file on every run and machine
/// (with the same zlib).
std::string gzipCompress(std::string_view bytes);

/// Gzips what is written to it into another sink as it comes: one gzip
/// member, the same bytes as gzipCompress of everything written (deflate
/// without flushes does not depend on how its input is split). finish()
/// writes the last block and the trailer; the sink under it is not
/// finished.
class GzipSink final : public ByteSink {
public:
  explicit GzipSink(ByteSink &out);
  ~GzipSink() override;
  GzipSink(const GzipSink &) = delete;
  GzipSink &operator=(const GzipSink &) = delete;

  void write(std::string_view bytes) override;
  void finish() override;

private:
  struct Deflater;
  std::unique_ptr<Deflater> z_;
  ByteSink &out_;
  bool finished_ = false;
};

/// Whether `path` names a gzip file (ends in `.gz`).
bool isGzipPath(std::string_view path);

/// `bytes`, gzipped when `path` ends in `.gz`: what to write to `path`.
std::string encodeForPath(std::string_view path, std::string bytes);

/// encodeForPath for bytes made piece by piece: writes what `produce`
/// writes to `path` as it comes (writeFileStreamed), gzipped when `path`
/// ends in `.gz`.
void writeFileEncoded(const std::string &path,
                      const std::function<void(ByteSink &)> &produce);

} // namespace spyre
