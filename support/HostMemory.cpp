#include "support/HostMemory.h"

#include <cstdio>
#include <limits>
#include <unistd.h>

namespace spyre {

uint64_t saturatingMul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    return std::numeric_limits<uint64_t>::max();
  return out;
}

uint64_t saturatingElements(const std::vector<int64_t> &shape) {
  uint64_t n = 1;
  for (int64_t d : shape)
    n = saturatingMul(n, d < 0 ? 0 : static_cast<uint64_t>(d));
  return n;
}

uint64_t physicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageBytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageBytes <= 0)
    return 0;
  return saturatingMul(static_cast<uint64_t>(pages),
                       static_cast<uint64_t>(pageBytes));
}

std::string memorySizeText(uint64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB",
                                       "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, value < 10 ? "%.1f %s" : "%.0f %s", value,
                kUnits[unit]);
  return text;
}

uint64_t saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return std::numeric_limits<uint64_t>::max();
  return out;
}

void HostMemoryEstimate::note(const std::string &tensor, uint64_t tensorBytes) {
  if (largestTensor.empty() || tensorBytes > largestBytes) {
    largestTensor = tensor;
    largestBytes = tensorBytes;
  }
}

void HostMemoryEstimate::add(const std::string &tensor, uint64_t tensorBytes) {
  note(tensor, tensorBytes);
  bytes = saturatingAdd(bytes, tensorBytes);
}

void checkHostMemory(const HostMemoryEstimate &estimate, uint64_t limit,
                     const SourceLoc &where) {
  if (limit == 0 || estimate.bytes <= limit)
    return;
  throw UserError(where, "the run needs " + memorySizeText(estimate.bytes) +
                             " of host memory, more than the " +
                             memorySizeText(limit) +
                             " of this machine (tensor '" +
                             estimate.largestTensor + "' alone takes " +
                             memorySizeText(estimate.largestBytes) + ")");
}

} // namespace spyre
