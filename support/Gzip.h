// Gzip (RFC 1952) for files users ask for compressed: `--trace t.json.gz`.
// Perfetto UI and chrome://tracing open gzip traces directly.
#pragma once

#include <string>
#include <string_view>

namespace spyre {

/// `bytes` as one gzip member. The header holds no time stamp and no file
/// name, so the same bytes give the same file on every run and machine
/// (with the same zlib).
std::string gzipCompress(std::string_view bytes);

/// Whether `path` names a gzip file (ends in `.gz`).
bool isGzipPath(std::string_view path);

/// `bytes`, gzipped when `path` ends in `.gz`: what to write to `path`.
std::string encodeForPath(std::string_view path, std::string bytes);

} // namespace spyre
