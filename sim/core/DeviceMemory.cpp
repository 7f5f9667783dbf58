#include "sim/core/DeviceMemory.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <cstring>

namespace spyre::sim {

const DeviceMemory::Page *DeviceMemory::findPage(uint64_t index) const {
  auto it = pages_.find(index);
  return it == pages_.end() ? nullptr : it->second.get();
}

DeviceMemory::Page &DeviceMemory::pageFor(uint64_t index) {
  std::unique_ptr<Page> &slot = pages_[index];
  if (!slot) {
    slot = std::make_unique<Page>();
    slot->fill(0);
  }
  return *slot;
}

void DeviceMemory::read(uint64_t addr, void *dst, uint64_t n) const {
  SPYRE_ASSERT(addr + n <= sizeBytes_ && addr + n >= addr,
               "device memory read out of bounds");
  auto *out = static_cast<uint8_t *>(dst);
  while (n > 0) {
    uint64_t index = addr / kPageBytes, offset = addr % kPageBytes;
    uint64_t chunk = std::min(n, kPageBytes - offset);
    if (const Page *page = findPage(index))
      std::memcpy(out, page->data() + offset, chunk);
    else
      std::memset(out, 0, chunk);
    out += chunk;
    addr += chunk;
    n -= chunk;
  }
}

void DeviceMemory::write(uint64_t addr, const void *src, uint64_t n) {
  SPYRE_ASSERT(addr + n <= sizeBytes_ && addr + n >= addr,
               "device memory write out of bounds");
  const auto *in = static_cast<const uint8_t *>(src);
  while (n > 0) {
    uint64_t index = addr / kPageBytes, offset = addr % kPageBytes;
    uint64_t chunk = std::min(n, kPageBytes - offset);
    std::memcpy(pageFor(index).data() + offset, in, chunk);
    in += chunk;
    addr += chunk;
    n -= chunk;
  }
}

} // namespace spyre::sim
