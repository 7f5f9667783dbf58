// Request traces for `spyre serve` (docs/serve.md): a CSV of arrival time,
// prompt tokens and output tokens per request, in this project's columns
// (`arrival_s,prompt_tokens,output_tokens`) or in the Azure LLM inference
// trace's (`TIMESTAMP,ContextTokens,GeneratedTokens`, the timestamp a date
// and time, arrivals taken relative to the first row), either with the
// optional columns `prefix_id,prefix_tokens` (the prompt starts with the
// shared prefix `prefix_id`, of `prefix_tokens` tokens); and a generator of
// synthetic traces (Poisson or fixed arrivals, fixed, uniform or lognormal
// lengths) that is deterministic for a seed.
//
// A trace is untrusted input: its size, row count, token counts and times
// are bounded, and every bad cell is a UserError at `file:line:col`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::serve {

struct Request {
  int64_t id = 0;       ///< row order, from 0
  double arrivalS = 0;  ///< seconds from the trace's start
  int64_t promptTokens = 0;
  int64_t outputTokens = 0;
  /// The shared prefix the prompt starts with: its id, -1 for none, and
  /// its tokens (the same for every request naming the id, at most the
  /// prompt's).
  int64_t prefixId = -1;
  int64_t prefixTokens = 0;
};

/// Largest prefix id a trace names.
constexpr int64_t kMaxPrefixId = int64_t{1} << 40;

/// Largest trace read, rows in it, and tokens of one prompt or output
/// (the Azure 2023 traces are a few MB and 20,000-30,000 rows; contexts are
/// below 2^17 tokens for every model served today).
constexpr size_t kMaxTraceBytes = 64u << 20;
constexpr size_t kMaxTraceRows = 1000000;
constexpr int64_t kMaxRequestTokens = 1 << 20;
/// Output tokens of all the trace's requests together: the server keeps
/// each token's time (8 bytes) and runs a step for it.
constexpr int64_t kMaxTraceOutputTokens = int64_t{1} << 25;
/// Latest arrival accepted: 10^7 s, about 116 days.
constexpr double kMaxArrivalS = 1e7;

/// Parses the text of a trace; `file` names it in messages. Arrival times
/// must not decrease from one row to the next.
std::vector<Request> parseTrace(std::string_view text, const std::string &file);

/// Reads and parses the file `path`.
std::vector<Request> loadTrace(const std::string &path);

/// A distribution of token counts, as `--prompt` and `--output` spell it:
/// `fixed:N`, `uniform:MIN:MAX` (inclusive) or `lognormal:MEDIAN:SIGMA`
/// (the log of the count is normal with mean ln MEDIAN and deviation
/// SIGMA). Draws are rounded and clamped to [1, kMaxRequestTokens].
struct LengthDist {
  enum class Kind { Fixed, Uniform, Lognormal };
  Kind kind = Kind::Fixed;
  double a = 1;
  double b = 0;
};

/// Parses a distribution; errors name `flag`.
LengthDist parseLengthDist(const std::string &text, const std::string &flag);

enum class Arrivals { Poisson, Fixed };

struct GenOptions {
  double rate = 1;  ///< requests per second
  Arrivals arrivals = Arrivals::Poisson;
  LengthDist prompt;
  LengthDist output;
  int64_t count = 100;
  uint64_t seed = 1;
  /// With prefixGroups > 0, each prompt starts with one of that many
  /// shared prefixes of prefixTokens tokens (drawn uniformly), added to the
  /// drawn prompt length, as `vllm bench serve`'s random dataset adds its
  /// `--random-prefix-len`.
  int64_t prefixTokens = 0;
  int64_t prefixGroups = 0;
};

/// The trace's requests: with Poisson arrivals the gaps are exponential with
/// mean 1/rate, with fixed arrivals exactly 1/rate; the first request
/// arrives at 0. The same options give the same requests on every machine
/// (the generator is splitmix64 with its own transforms, not <random>).
std::vector<Request> generateTrace(const GenOptions &options);

/// The trace as CSV in this project's columns, times to the microsecond;
/// with the prefix columns when a request has a prefix.
std::string traceCsv(const std::vector<Request> &requests);

} // namespace spyre::serve
