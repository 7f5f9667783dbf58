// The serving knobs of a serve sweep (ServeSettings.h): their table, their
// checks (the same as `spyre serve`'s options) and their canonical text.
#include "sweep/ServeSettings.h"

#include "serve/Metrics.h"
#include "serve/Server.h"
#include "serve/Trace.h"
#include "support/Diagnostic.h"

#include <fmt/format.h>

#include <cmath>

namespace spyre::sweep {

namespace {

using hw::ParamType;
using hw::ParamValue;

#define SERVE_INT(NAME, FIELD, GEN)                                            \
  ServeKey {                                                                   \
    NAME, ParamType::Int64, GEN,                                               \
        [](const ServeSettings &s) { return ParamValue(s.FIELD); },            \
        [](ServeSettings &s, const ParamValue &v) {                            \
          s.FIELD = std::get<int64_t>(v);                                      \
        }                                                                      \
  }
#define SERVE_DOUBLE(NAME, FIELD, GEN)                                         \
  ServeKey {                                                                   \
    NAME, ParamType::Double, GEN,                                              \
        [](const ServeSettings &s) { return ParamValue(s.FIELD); },            \
        [](ServeSettings &s, const ParamValue &v) {                            \
          s.FIELD = std::get<double>(v);                                       \
        }                                                                      \
  }
#define SERVE_STRING(NAME, FIELD, GEN)                                         \
  ServeKey {                                                                   \
    NAME, ParamType::String, GEN,                                              \
        [](const ServeSettings &s) { return ParamValue(s.FIELD); },            \
        [](ServeSettings &s, const ParamValue &v) {                            \
          s.FIELD = std::get<std::string>(v);                                  \
        }                                                                      \
  }

std::string intRange(int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi)
    return "";
  return fmt::format("must be a whole number in [{}, {}], got {}", lo, hi, v);
}

/// The message of a serve library error, without its location (the
/// library names its command-line flag; a spec names its key).
std::string messageOf(const UserError &e) { return e.diagnostic().message; }

} // namespace

const std::vector<ServeKey> &serveKeys() {
  static const std::vector<ServeKey> keys = {
      SERVE_DOUBLE("rate", rate, true),
      SERVE_STRING("arrivals", arrivals, true),
      SERVE_STRING("prompt", prompt, true),
      SERVE_STRING("output", output, true),
      SERVE_INT("count", count, true),
      SERVE_INT("seed", seed, true),
      SERVE_INT("prefix_tokens", prefixTokens, true),
      SERVE_INT("prefix_groups", prefixGroups, true),
      SERVE_DOUBLE("rate_scale", rateScale, false),
      SERVE_STRING("batching", batching, false),
      SERVE_INT("max_num_seqs", maxNumSeqs, false),
      SERVE_INT("max_model_len", maxModelLen, false),
      SERVE_INT("chunk_size", chunkSize, false),
      SERVE_STRING("prefix_caching", prefixCaching, false),
      SERVE_STRING("warmup_shapes", warmupShapes, false),
      SERVE_INT("num_kv_blocks", numKvBlocks, false),
      SERVE_DOUBLE("memory_utilization", memoryUtilization, false),
      SERVE_INT("simulated_layers", simulatedLayers, false),
      SERVE_INT("context_bucket", contextBucket, false),
      SERVE_STRING("slo", slo, false),
  };
  return keys;
}

#undef SERVE_INT
#undef SERVE_DOUBLE
#undef SERVE_STRING

const ServeKey *findServeKey(std::string_view key, bool bare) {
  if (!bare) {
    if (!key.starts_with(kServePrefix))
      return nullptr;
    key.remove_prefix(kServePrefix.size());
  }
  for (const ServeKey &k : serveKeys())
    if (k.name == key)
      return &k;
  return nullptr;
}

std::string serveValueProblem(const ServeKey &key, const ParamValue &value) {
  const std::string_view n = key.name;
  try {
    if (n == "rate" || n == "rate_scale") {
      const double v = std::get<double>(value);
      if (!(v > 0) || v > 1e6)
        return fmt::format("must be a number in (0, 1e6], got {}", v);
    } else if (n == "memory_utilization") {
      const double v = std::get<double>(value);
      if (!(v >= 0.01) || v > 1)
        return fmt::format("must be a share in [0.01, 1], got {}", v);
    } else if (n == "arrivals") {
      const std::string &v = std::get<std::string>(value);
      if (v != "poisson" && v != "fixed")
        return "must be poisson or fixed, got '" + v + "'";
    } else if (n == "prefix_caching") {
      const std::string &v = std::get<std::string>(value);
      if (v != "on" && v != "off")
        return "must be on or off, got '" + v + "'";
    } else if (n == "prefix_tokens") {
      return intRange(std::get<int64_t>(value), 0, serve::kMaxRequestTokens);
    } else if (n == "prefix_groups") {
      return intRange(std::get<int64_t>(value), 0, 1000000);
    } else if (n == "batching") {
      const std::string &v = std::get<std::string>(value);
      if (v != "continuous" && v != "static")
        return "must be continuous or static, got '" + v + "'";
    } else if (n == "prompt" || n == "output") {
      serve::parseLengthDist(std::get<std::string>(value), "serve");
    } else if (n == "warmup_shapes") {
      const std::string &v = std::get<std::string>(value);
      size_t start = 0;
      while (start <= v.size()) {
        const size_t comma = v.find(',', start);
        serve::parseWarmupShape(
            v.substr(start, comma == std::string::npos ? std::string::npos
                                                       : comma - start),
            "serve");
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else if (n == "slo") {
      if (!std::get<std::string>(value).empty())
        serve::parseSlo(std::get<std::string>(value));
    } else if (n == "count") {
      return intRange(std::get<int64_t>(value), 1,
                      static_cast<int64_t>(serve::kMaxTraceRows));
    } else if (n == "seed") {
      return intRange(std::get<int64_t>(value), 0, INT64_MAX);
    } else if (n == "max_num_seqs" || n == "simulated_layers") {
      return intRange(std::get<int64_t>(value), 1, 1024);
    } else if (n == "max_model_len" || n == "chunk_size") {
      return intRange(std::get<int64_t>(value), 1, serve::kMaxRequestTokens);
    } else if (n == "num_kv_blocks") {
      return intRange(std::get<int64_t>(value), 0, INT64_MAX / 1024);
    } else if (n == "context_bucket") {
      return intRange(std::get<int64_t>(value), 1, 65536);
    }
  } catch (const UserError &e) {
    return messageOf(e);
  }
  return "";
}

std::string serveSettingsProblem(const ServeSettings &s, bool generated) {
  if (generated && (!(s.rate > 0) || s.prompt.empty() || s.output.empty() ||
                    s.count < 1))
    return "the generated trace needs serve.rate, serve.prompt, "
           "serve.output and serve.count";
  if (generated && (s.prefixTokens > 0) != (s.prefixGroups > 0))
    return "serve.prefix_tokens and serve.prefix_groups come together";
  if (s.batching == "static" && s.warmupShapes.empty())
    return "static batching needs at least one warmup shape "
           "(serve.warmup_shapes)";
  return "";
}

std::string serveSettingsText(const ServeSettings &s) {
  std::string out;
  for (const ServeKey &k : serveKeys())
    out += std::string(kServePrefix) + std::string(k.name) + "=" +
           hw::formatValue(k.get(s)) + "\n";
  return out;
}

} // namespace spyre::sweep
