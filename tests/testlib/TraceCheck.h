// Checks a Chrome trace-event JSON file (what `spyre sim --trace` writes and
// Perfetto UI or chrome://tracing open) against the format as Perfetto's JSON
// importer reads it, so a trace that passes here displays as written.
//
// Times are compared the way Perfetto imports them: `ts` and `dur` are
// microseconds, each converted on its own to integer nanoseconds by
// llround(value * 1000) (perfetto src/trace_processor/importers/json,
// CoerceToTs). Two slices that touch in the file but overlap after that
// rounding overlap on screen, and are reported.
//
// Rules (the Trace Event Format document, plus the conventions of our traces):
// - the top level is an object with a `traceEvents` array (or a bare array);
//   `displayTimeUnit`, when present, is "ms" or "ns";
// - every event is an object with a one-letter `ph`, an integer `pid` and a
//   string `name`;
// - X (complete): numeric `ts`, numeric `dur` >= 0, integer `tid`; no two X
//   slices of one (pid, tid) overlap (our threads are flat: one instruction
//   at a time, no nesting);
// - B/E: `ts` and `tid`; every E closes an open B of its thread, and none is
//   left open;
// - i/I (instant): numeric `ts`; scope `s` is g, p or t (default t), and a
//   thread-scoped instant has a `tid`;
// - M (metadata): process_name / thread_name with a string `args.name`,
//   process_sort_index / thread_sort_index with an integer
//   `args.sort_index`; thread metadata has a `tid`; one name per process and
//   per thread; every pid and (pid, tid) any event uses is named;
// - s/t/f (flow): `ts`, `tid`, an `id` and a string `cat`; an `f` has
//   "bp":"e" (it binds to the slice enclosing it, as our flows do); per id
//   exactly one s first, any t, exactly one f last, in nondecreasing time,
//   all with the same cat; the s and the f each lie within a slice of their
//   thread (ends included);
// - C (counter): numeric `ts` and a non-empty `args` object of numbers;
//   the samples of one track (pid, name) have increasing timestamps;
// - any other phase is an error (our traces use none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spyre::test {

/// One complete (X) event, with times as Perfetto imports them.
struct TraceSliceInfo {
  size_t event = 0; ///< index in traceEvents
  int64_t pid = 0;
  int64_t tid = 0;
  std::string name;
  int64_t startNs = 0;
  int64_t durNs = 0;
};

struct TraceCheckResult {
  std::vector<std::string> errors; ///< one sentence each; empty when valid
  size_t events = 0;
  std::vector<TraceSliceInfo> slices; ///< X events in file order
  size_t instants = 0;
  size_t flowEvents = 0;
  size_t counterSamples = 0;
  std::map<int64_t, std::string> processNames;
  std::map<std::pair<int64_t, int64_t>, std::string> threadNames;

  bool ok() const { return errors.empty(); }
  /// The first `limit` errors, one per line, and how many more there are.
  std::string errorText(size_t limit = 20) const;
};

/// Parses and checks one trace file's text.
TraceCheckResult checkTrace(std::string_view json);

/// Perfetto's conversion of a JSON time in microseconds to nanoseconds.
int64_t perfettoNs(double microseconds);

} // namespace spyre::test
