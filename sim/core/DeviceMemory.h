// Device memory contents: a sparse byte store over the card's whole address
// space (128 GiB by default). Only pages that are written are allocated, so
// host memory follows what a program touches, not what it declares; reads of
// untouched bytes give zero.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>

namespace spyre::sim {

class DeviceMemory {
public:
  static constexpr uint64_t kPageBytes = 64 * 1024;

  explicit DeviceMemory(uint64_t sizeBytes) : sizeBytes_(sizeBytes) {}

  uint64_t sizeBytes() const { return sizeBytes_; }
  /// Host bytes allocated for contents.
  uint64_t allocatedBytes() const { return pages_.size() * kPageBytes; }

  /// Copies [addr, addr+n) out; the caller has checked the bounds.
  void read(uint64_t addr, void *dst, uint64_t n) const;
  /// Copies into [addr, addr+n); the caller has checked the bounds.
  void write(uint64_t addr, const void *src, uint64_t n);

  /// Calls f(addr, bytes, n) for every allocated page in address order: the
  /// contents a memory model elsewhere needs to start from.
  template <typename F> void forEachPage(F &&f) const {
    for (const auto &[index, page] : pages_) {
      const uint64_t addr = index * kPageBytes;
      f(addr, page->data(), std::min(kPageBytes, sizeBytes_ - addr));
    }
  }

private:
  using Page = std::array<uint8_t, kPageBytes>;
  const Page *findPage(uint64_t index) const;
  Page &pageFor(uint64_t index);

  uint64_t sizeBytes_;
  std::map<uint64_t, std::unique_ptr<Page>> pages_;
};

} // namespace spyre::sim
