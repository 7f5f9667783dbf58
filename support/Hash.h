// Stable hashes: identical on every machine and build, so they can be stored
// in files (config fingerprints, program checksums) and compared later.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spyre {

/// 64-bit FNV-1a over bytes. Used for config fingerprints.
class Fnv1a64 {
public:
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  uint64_t digest() const { return state_; }

private:
  uint64_t state_ = 0xcbf29ce484222325ULL;
};

uint64_t fnv1a64(std::string_view bytes);

/// CRC-32 (IEEE 802.3 polynomial, as zlib and PNG use). Used for program
/// file checksums: it catches every single-bit and burst error up to 32 bits.
uint32_t crc32(const void *data, size_t size);

/// Lower-case hex with a fixed number of digits, e.g. toHex(0xab, 4) = "00ab".
std::string toHex(uint64_t value, int digits);

} // namespace spyre
