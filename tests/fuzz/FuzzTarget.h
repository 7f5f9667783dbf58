// What every fuzz target shares: the libFuzzer entry point it defines, and
// the conversion of the fuzzer's bytes to text.
//
// A target calls one real loader on the bytes. A UserError (or diagnostics)
// is the expected answer to bad input; anything else is a finding: a crash,
// a sanitizer report, another exception, or a broken property checked with
// SPYRE_ASSERT (which aborts in every build type, so libFuzzer keeps the
// input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace spyre::fuzz {

inline std::string_view asText(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

} // namespace spyre::fuzz
