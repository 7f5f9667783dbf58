// Deterministic random numbers for test inputs: PCG32 (O'Neill, "PCG: A
// Family of Simple Fast Space-Efficient Statistically Good Algorithms for
// Random Number Generation", 2014; the pcg32_random_r of pcg-c-basic),
// written out here so that a seed gives the same numbers with every compiler
// and standard library (std:: distributions do not promise that).
#pragma once

#include "compiler/ir/Types.h"
#include "support/Npy.h"

#include <cstdint>
#include <string_view>

namespace spyre::compiler::ref {

class Pcg32 {
public:
  /// pcg32_srandom_r(initState, initSequence).
  Pcg32(uint64_t initState, uint64_t initSequence);

  /// The next 32 random bits.
  uint32_t next();
  /// Uniform in [0, 1), 53 random bits from two draws.
  double nextDouble();

private:
  uint64_t state_ = 0;
  uint64_t increment_ = 0;
};

/// Random data for a graph input called `name`: each input draws from its own
/// PCG32 sequence (selected by the FNV-1a hash of its name), so its values
/// do not depend on the other inputs. Floats are doubles uniform in [-1, 1)
/// rounded to the element type (so within [-1, 1]); i8 is uniform over
/// -128..127, i32 over -1000..1000, or over 0..idBound-1 when `idBound` is
/// positive (ids of a table of that many rows).
NpyArray randomInput(const TensorType &type, uint64_t seed,
                     std::string_view name, int64_t idBound = 0);

} // namespace spyre::compiler::ref
