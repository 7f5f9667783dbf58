// The Chrome trace-event checker (TraceCheck.h).
#include "testlib/TraceCheck.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace spyre::test {

namespace {

using nlohmann::json;

using ThreadKey = std::pair<int64_t, int64_t>;

struct FlowStep {
  size_t event = 0;
  char phase = 's';
  int64_t ns = 0;
  std::string cat;
  ThreadKey thread;
};

struct CounterSample {
  size_t event = 0;
  int64_t ns = 0;
};

class Checker {
public:
  explicit Checker(TraceCheckResult &out) : out_(out) {}

  void run(std::string_view text);

private:
  void error(size_t event, const std::string &what) {
    out_.errors.push_back("event " + std::to_string(event) + ": " + what);
  }
  void topError(const std::string &what) { out_.errors.push_back(what); }

  void checkEvent(size_t i, const json &e);
  void checkMetadata(size_t i, const json &e, int64_t pid);
  bool numberField(size_t i, const json &e, const char *key, double &value);
  bool integerField(size_t i, const json &e, const char *key, int64_t &value);
  void checkOverlaps();
  void checkFlows();
  void checkFlowBinding(const std::string &id, const FlowStep &step);
  void checkCounters();
  void checkNames();

  TraceCheckResult &out_;
  std::map<ThreadKey, std::vector<size_t>> openBegins_;
  std::map<std::string, std::vector<FlowStep>> flows_; ///< by id
  std::map<std::pair<int64_t, std::string>, std::vector<CounterSample>> counters_;
  std::set<int64_t> pidsUsed_;
  std::set<ThreadKey> threadsUsed_;
  /// Slices per thread, sorted by start (filled by checkOverlaps).
  std::map<ThreadKey, std::vector<const TraceSliceInfo *>> byThread_;
};

/// A string member, or `fallback` when it is missing or not a string
/// (json::value would throw on a wrong type).
std::string stringOr(const json &e, const char *key,
                     const std::string &fallback) {
  if (!e.contains(key) || !e[key].is_string())
    return fallback;
  return e[key].get<std::string>();
}

std::string describe(const json &e) {
  std::string out = "'" + stringOr(e, "ph", "?") + "'";
  if (e.contains("name") && e["name"].is_string())
    out += " '" + e["name"].get<std::string>() + "'";
  return out;
}

std::string nsRange(int64_t start, int64_t dur) {
  return "[" + std::to_string(start) + ", " + std::to_string(start + dur) +
         ") ns";
}

bool Checker::numberField(size_t i, const json &e, const char *key,
                          double &value) {
  if (!e.contains(key) || !e[key].is_number()) {
    error(i, describe(e) + " needs a numeric '" + key + "'");
    return false;
  }
  value = e[key].get<double>();
  if (!std::isfinite(value)) {
    error(i, describe(e) + " has a non-finite '" + key + "'");
    return false;
  }
  return true;
}

bool Checker::integerField(size_t i, const json &e, const char *key,
                           int64_t &value) {
  if (!e.contains(key) || !e[key].is_number_integer()) {
    error(i, describe(e) + " needs an integer '" + key + "'");
    return false;
  }
  value = e[key].get<int64_t>();
  return true;
}

void Checker::run(std::string_view text) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error &e) {
    topError(std::string("not valid JSON: ") + e.what());
    return;
  }
  const json *events = nullptr;
  if (root.is_array()) {
    events = &root;
  } else if (root.is_object()) {
    if (!root.contains("traceEvents") || !root["traceEvents"].is_array()) {
      topError("the top-level object has no 'traceEvents' array");
      return;
    }
    events = &root["traceEvents"];
    if (root.contains("displayTimeUnit")) {
      const json &unit = root["displayTimeUnit"];
      if (!unit.is_string() || (unit != "ms" && unit != "ns"))
        topError("'displayTimeUnit' must be \"ms\" or \"ns\"");
    }
  } else {
    topError("the top level is neither an object nor an array");
    return;
  }
  out_.events = events->size();
  for (size_t i = 0; i < events->size(); ++i)
    checkEvent(i, (*events)[i]);
  for (const auto &[thread, open] : openBegins_)
    for (size_t b : open)
      error(b, "'B' on pid " + std::to_string(thread.first) + " tid " +
                   std::to_string(thread.second) +
                   " is never closed by an 'E'");
  checkOverlaps();
  checkFlows();
  checkCounters();
  checkNames();
}

void Checker::checkEvent(size_t i, const json &e) {
  if (!e.is_object()) {
    error(i, "is not an object");
    return;
  }
  if (!e.contains("ph") || !e["ph"].is_string() ||
      e["ph"].get<std::string>().size() != 1) {
    error(i, "needs a one-letter string 'ph'");
    return;
  }
  const char ph = e["ph"].get<std::string>()[0];
  if (ph != 'E' && (!e.contains("name") || !e["name"].is_string()))
    error(i, describe(e) + " needs a string 'name'");
  int64_t pid = 0;
  if (!integerField(i, e, "pid", pid))
    return;

  switch (ph) {
  case 'X': {
    int64_t tid = 0;
    double ts = 0, dur = 0;
    bool ok = integerField(i, e, "tid", tid);
    ok = numberField(i, e, "ts", ts) && ok;
    ok = numberField(i, e, "dur", dur) && ok;
    if (!ok)
      return;
    if (dur < 0) {
      error(i, describe(e) + " has a negative 'dur'");
      return;
    }
    pidsUsed_.insert(pid);
    threadsUsed_.insert({pid, tid});
    out_.slices.push_back({i, pid, tid, stringOr(e, "name", ""), perfettoNs(ts),
                           perfettoNs(dur)});
    return;
  }
  case 'B':
  case 'E': {
    int64_t tid = 0;
    double ts = 0;
    bool ok = integerField(i, e, "tid", tid);
    if (!(numberField(i, e, "ts", ts) && ok))
      return;
    pidsUsed_.insert(pid);
    threadsUsed_.insert({pid, tid});
    std::vector<size_t> &open = openBegins_[{pid, tid}];
    if (ph == 'B') {
      open.push_back(i);
      return;
    }
    if (open.empty()) {
      error(i, "'E' without an open 'B' on its thread");
      return;
    }
    open.pop_back();
    return;
  }
  case 'i':
  case 'I': {
    double ts = 0;
    if (!numberField(i, e, "ts", ts))
      return;
    std::string scope = "t";
    if (e.contains("s")) {
      if (!e["s"].is_string() ||
          (e["s"] != "g" && e["s"] != "p" && e["s"] != "t")) {
        error(i, describe(e) + " has a scope 's' other than g, p or t");
        return;
      }
      scope = e["s"].get<std::string>();
    }
    if (scope == "t") {
      int64_t tid = 0;
      if (!integerField(i, e, "tid", tid))
        return;
      threadsUsed_.insert({pid, tid});
    }
    pidsUsed_.insert(pid);
    ++out_.instants;
    return;
  }
  case 'M':
    checkMetadata(i, e, pid);
    return;
  case 's':
  case 't':
  case 'f': {
    int64_t tid = 0;
    double ts = 0;
    bool ok = integerField(i, e, "tid", tid);
    ok = numberField(i, e, "ts", ts) && ok;
    if (!e.contains("id") ||
        !(e["id"].is_number_integer() || e["id"].is_string())) {
      error(i, describe(e) + " needs an 'id' (integer or string)");
      ok = false;
    }
    if (!e.contains("cat") || !e["cat"].is_string()) {
      error(i, describe(e) + " needs a string 'cat'");
      ok = false;
    }
    // Our flows end in the slice that encloses them ("bp":"e"); without it
    // the viewer binds the arrow to the next slice that begins.
    if (ph == 'f' && stringOr(e, "bp", "") != "e") {
      error(i, describe(e) + " needs \"bp\":\"e\" (bind to the enclosing slice)");
      ok = false;
    }
    if (!ok)
      return;
    ++out_.flowEvents;
    pidsUsed_.insert(pid);
    threadsUsed_.insert({pid, tid});
    flows_[e["id"].dump()].push_back(
        {i, ph, perfettoNs(ts), e["cat"].get<std::string>(), {pid, tid}});
    return;
  }
  case 'C': {
    double ts = 0;
    if (!numberField(i, e, "ts", ts))
      return;
    if (!e.contains("args") || !e["args"].is_object()) {
      error(i, describe(e) + " needs an 'args' object");
      return;
    }
    if (e["args"].empty())
      error(i, describe(e) + " has no counter value in 'args'");
    for (const auto &[key, value] : e["args"].items())
      if (!value.is_number())
        error(i, describe(e) + " counter '" + key + "' is not a number");
    pidsUsed_.insert(pid);
    ++out_.counterSamples;
    counters_[{pid, stringOr(e, "name", "")}].push_back({i, perfettoNs(ts)});
    return;
  }
  default:
    error(i, std::string("unknown or unsupported phase '") + ph + "'");
    return;
  }
}

void Checker::checkMetadata(size_t i, const json &e, int64_t pid) {
  const std::string name = stringOr(e, "name", "");
  const bool isThread = name == "thread_name" || name == "thread_sort_index";
  if (name != "process_name" && name != "thread_name" &&
      name != "process_sort_index" && name != "thread_sort_index") {
    error(i,
          "metadata '" + name + "' is not a process/thread name or sort index");
    return;
  }
  int64_t tid = 0;
  if (isThread && !integerField(i, e, "tid", tid))
    return;
  if (!e.contains("args") || !e["args"].is_object()) {
    error(i, "metadata '" + name + "' needs an 'args' object");
    return;
  }
  const json &args = e["args"];
  if (name == "process_sort_index" || name == "thread_sort_index") {
    if (!args.contains("sort_index") || !args["sort_index"].is_number_integer())
      error(i, "metadata '" + name + "' needs an integer 'args.sort_index'");
    return;
  }
  if (!args.contains("name") || !args["name"].is_string()) {
    error(i, "metadata '" + name + "' needs a string 'args.name'");
    return;
  }
  const std::string value = args["name"].get<std::string>();
  if (isThread) {
    auto [it, inserted] = out_.threadNames.emplace(ThreadKey{pid, tid}, value);
    if (!inserted && it->second != value)
      error(i, "thread pid " + std::to_string(pid) + " tid " +
                   std::to_string(tid) + " named twice ('" + it->second +
                   "' and '" + value + "')");
    return;
  }
  auto [it, inserted] = out_.processNames.emplace(pid, value);
  if (!inserted && it->second != value)
    error(i, "process " + std::to_string(pid) + " named twice ('" + it->second +
                 "' and '" + value + "')");
}

void Checker::checkOverlaps() {
  std::map<ThreadKey, std::vector<const TraceSliceInfo *>> &byThread = byThread_;
  for (const TraceSliceInfo &s : out_.slices)
    byThread[{s.pid, s.tid}].push_back(&s);
  for (auto &[thread, slices] : byThread) {
    std::stable_sort(slices.begin(), slices.end(),
                     [](const TraceSliceInfo *a, const TraceSliceInfo *b) {
                       return a->startNs < b->startNs;
                     });
    const TraceSliceInfo *last = nullptr; // the slice reaching furthest
    for (const TraceSliceInfo *s : slices) {
      if (last && s->startNs < last->startNs + last->durNs)
        error(s->event, "'X' '" + s->name + "' " +
                            nsRange(s->startNs, s->durNs) + " overlaps event " +
                            std::to_string(last->event) + " '" + last->name +
                            "' " + nsRange(last->startNs, last->durNs) +
                            " on pid " + std::to_string(thread.first) +
                            " tid " + std::to_string(thread.second) +
                            " (times as Perfetto imports them)");
      if (!last || s->startNs + s->durNs > last->startNs + last->durNs)
        last = s;
    }
  }
}

void Checker::checkFlowBinding(const std::string &id, const FlowStep &step) {
  // An 's' binds to the slice enclosing it, an 'f' with "bp":"e" too: each
  // end must lie within a slice of its thread (ends inclusive, in Perfetto's
  // nanoseconds).
  auto it = byThread_.find(step.thread);
  if (it != byThread_.end())
    for (const TraceSliceInfo *s : it->second)
      if (s->startNs <= step.ns && step.ns <= s->startNs + s->durNs)
        return;
  error(step.event, "flow " + id + " '" + std::string(1, step.phase) + "' at " +
                        std::to_string(step.ns) + " ns is in no slice of pid " +
                        std::to_string(step.thread.first) + " tid " +
                        std::to_string(step.thread.second));
}

void Checker::checkCounters() {
  for (const auto &[track, samples] : counters_)
    for (size_t k = 1; k < samples.size(); ++k)
      if (samples[k].ns <= samples[k - 1].ns)
        error(samples[k].event, "counter '" + track.second + "' of pid " +
                                    std::to_string(track.first) + " at " +
                                    std::to_string(samples[k].ns) +
                                    " ns does not come after its previous sample (" +
                                    std::to_string(samples[k - 1].ns) + " ns)");
}

void Checker::checkFlows() {
  for (auto &[id, steps] : flows_) {
    const FlowStep &first = steps.front();
    const FlowStep &last = steps.back();
    if (first.phase != 's')
      error(first.event, "flow " + id + " does not begin with an 's' event");
    if (last.phase != 'f')
      error(last.event, "flow " + id + " does not end with an 'f' event");
    size_t starts = 0, finishes = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      starts += steps[k].phase == 's';
      finishes += steps[k].phase == 'f';
      if (k > 0 && steps[k].ns < steps[k - 1].ns)
        error(steps[k].event, "flow " + id + " steps back in time");
    }
    if (starts != 1 || finishes != 1)
      error(first.event, "flow " + id + " has " + std::to_string(starts) +
                             " 's' and " + std::to_string(finishes) +
                             " 'f' events (needs one each)");
    for (const FlowStep &step : steps) {
      if (step.cat != first.cat)
        error(step.event, "flow " + id + " changes 'cat' from '" + first.cat +
                              "' to '" + step.cat + "'");
      if (step.phase != 't')
        checkFlowBinding(id, step);
    }
  }
}

void Checker::checkNames() {
  for (int64_t pid : pidsUsed_)
    if (!out_.processNames.count(pid))
      topError("process " + std::to_string(pid) +
               " has events but no 'process_name' metadata");
  for (const ThreadKey &t : threadsUsed_)
    if (!out_.threadNames.count(t))
      topError("thread pid " + std::to_string(t.first) + " tid " +
               std::to_string(t.second) +
               " has events but no 'thread_name' metadata");
}

} // namespace

int64_t perfettoNs(double microseconds) {
  return static_cast<int64_t>(std::llround(microseconds * 1000.0));
}

std::string TraceCheckResult::errorText(size_t limit) const {
  std::string out;
  for (size_t i = 0; i < errors.size() && i < limit; ++i)
    out += errors[i] + "\n";
  if (errors.size() > limit)
    out += "... and " + std::to_string(errors.size() - limit) + " more\n";
  return out;
}

TraceCheckResult checkTrace(std::string_view json) {
  TraceCheckResult result;
  Checker(result).run(json);
  return result;
}

} // namespace spyre::test
