#include "compiler/ref/Random.h"

#include "numerics/Half.h"
#include "support/Hash.h"

#include <cstring>

namespace spyre::compiler::ref {

Pcg32::Pcg32(uint64_t initState, uint64_t initSequence) {
  increment_ = (initSequence << 1u) | 1u;
  next();
  state_ += initState;
  next();
}

uint32_t Pcg32::next() {
  uint64_t old = state_;
  state_ = old * 6364136223846793005ULL + increment_;
  auto xorShifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
  auto rot = static_cast<uint32_t>(old >> 59u);
  return (xorShifted >> rot) | (xorShifted << ((32u - rot) & 31u));
}

double Pcg32::nextDouble() {
  uint64_t hi = next() >> 5; // 27 bits
  uint64_t lo = next() >> 6; // 26 bits
  return static_cast<double>((hi << 26) | lo) * 0x1.0p-53;
}

NpyArray randomInput(const TensorType &type, uint64_t seed,
                     std::string_view name, int64_t idBound) {
  Pcg32 rng(seed, fnv1a64(name));
  NpyArray a;
  a.dtype = toNpyDtype(type.elementType);
  a.shape = type.shape;
  int64_t n = type.elementCount();
  a.data.resize(static_cast<size_t>(type.byteSize()));
  char *p = a.data.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (type.elementType) {
    case ElementType::F32: {
      auto f = static_cast<float>(2 * rng.nextDouble() - 1);
      std::memcpy(p + i * 4, &f, 4);
      break;
    }
    case ElementType::F16: {
      uint16_t h = half::floatToHalf(static_cast<float>(2 * rng.nextDouble() - 1));
      std::memcpy(p + i * 2, &h, 2);
      break;
    }
    case ElementType::I8:
      p[i] = static_cast<char>(static_cast<int8_t>(static_cast<int>(rng.next() % 256) - 128));
      break;
    case ElementType::I32: {
      auto v = idBound > 0
                   ? static_cast<int32_t>(rng.next() %
                                          static_cast<uint64_t>(idBound))
                   : static_cast<int32_t>(rng.next() % 2001) - 1000;
      std::memcpy(p + i * 4, &v, 4);
      break;
    }
    }
  }
  return a;
}

} // namespace spyre::compiler::ref
