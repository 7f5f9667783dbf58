// The serving knobs of a serve sweep (docs/sweep.md, "Serve sweeps"): the
// keys a spec's `serve:` section sets for every point and that its grid or
// points list sweeps as `serve.KEY`, next to the config keys. A serve point
// runs `spyre serve` (serve/Serve.h) on its effective hardware config.
#pragma once

#include "hw/ConfigSchema.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sweep {

/// Keys of the serving knobs, written `serve.KEY` in a grid, a points list,
/// a constraint or a result column; bare in the `serve:` section.
inline constexpr std::string_view kServePrefix = "serve.";

/// One serve point's knobs. The trace is the spec's `requests` file or, when
/// there is none, generated from rate, arrivals, prompt, output, count and
/// seed (`spyre serve gen`); its arrival times are then divided by
/// rate_scale.
struct ServeSettings {
  double rate = 0; ///< generator: requests per second
  std::string arrivals = "poisson";
  std::string prompt; ///< generator: a length distribution, e.g. fixed:128
  std::string output;
  int64_t count = 0;
  int64_t seed = 1;
  /// generator: a shared prefix of prefixTokens before each prompt, one of
  /// prefixGroups (both 0: none)
  int64_t prefixTokens = 0;
  int64_t prefixGroups = 0;
  double rateScale = 1; ///< arrival times divided by this
  std::string batching = "continuous";
  int64_t maxNumSeqs = 4;
  int64_t maxModelLen = 4096;
  int64_t chunkSize = 512;
  std::string prefixCaching = "on"; ///< on or off
  /// Static batching: PROMPT:NEW_TOKENS:BATCH, several joined by commas.
  std::string warmupShapes;
  int64_t numKvBlocks = 0; ///< 0: from the device memory left
  double memoryUtilization = 0.9;
  int64_t simulatedLayers = 1;
  int64_t contextBucket = 256;
  std::string slo; ///< e.g. ttft=500,itl=50; empty: none
};

struct ServeKey {
  std::string_view name; ///< without the prefix
  hw::ParamType type;
  bool generator; ///< a parameter of the generated trace
  hw::ParamValue (*get)(const ServeSettings &);
  void (*set)(ServeSettings &, const hw::ParamValue &);
};

/// Every serving knob, in the order results and docs list them.
const std::vector<ServeKey> &serveKeys();

/// The knob `key` names (`serve.max_num_seqs`, or bare with `bare`), or null.
const ServeKey *findServeKey(std::string_view key, bool bare = false);

/// What is wrong with `value` for `key` (its type already checked): empty
/// when nothing, else a message saying what it must be.
std::string serveValueProblem(const ServeKey &key, const hw::ParamValue &value);

/// What keeps a point's knobs from running together (static batching
/// without warmup shapes; a generated trace, `generated`, missing one of
/// its parameters); empty when nothing.
std::string serveSettingsProblem(const ServeSettings &settings, bool generated);

/// Every knob as `serve.KEY=VALUE` lines, in key order: what a point's
/// serve fingerprint hashes.
std::string serveSettingsText(const ServeSettings &settings);

} // namespace spyre::sweep
