// Refusing a run whose host memory would not fit, before it is allocated.
//
// A tensor's size comes from a model or program file, untrusted input: a
// 564-byte program may declare 125 GB of tensors, and a graph a
// [1048576, 1048576] input. Allocating first and failing later ends in
// std::bad_alloc or the kernel's out-of-memory killer; estimating first
// gives a located error that names the tensor.
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre {

/// What a run will take: its peak host bytes, and its largest tensor for
/// the message.
struct HostMemoryEstimate {
  uint64_t bytes = 0;
  std::string largestTensor;
  uint64_t largestBytes = 0;

  /// Notes a tensor of `tensorBytes` (the largest one is named).
  void note(const std::string &tensor, uint64_t tensorBytes);
  /// Notes a tensor and adds its bytes to the total (saturating).
  void add(const std::string &tensor, uint64_t tensorBytes);
};

/// `a * b`, or UINT64_MAX when that does not fit.
uint64_t saturatingMul(uint64_t a, uint64_t b);
/// Elements of `shape`, saturating (negative dims count as 0).
uint64_t saturatingElements(const std::vector<int64_t> &shape);

/// The machine's physical memory in bytes: the limit of a run's estimate
/// (0 when the system does not say, which disables the check).
uint64_t physicalMemoryBytes();

/// `1.5 GiB`, `300 MiB`, `512 bytes`.
std::string memorySizeText(uint64_t bytes);

/// `a + b`, or UINT64_MAX when that does not fit.
uint64_t saturatingAdd(uint64_t a, uint64_t b);

/// Throws a UserError at `where` when the estimate is more than `limit`
/// bytes (a limit of 0 checks nothing). The message gives the total and
/// names the largest tensor: `error: the run needs 8.0 TiB of host memory,
/// more than the 23 GiB of this machine (tensor 'x' alone takes 8.0 TiB)`.
void checkHostMemory(const HostMemoryEstimate &estimate, uint64_t limit,
                     const SourceLoc &where);

} // namespace spyre
