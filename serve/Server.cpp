#include "serve/Server.h"

#include "support/Diagnostic.h"
#include "support/ParseNumber.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <tuple>

namespace spyre::serve {

namespace {

int64_t blocksFor(int64_t tokens) {
  return (tokens + kBlockTokens - 1) / kBlockTokens;
}

/// A sequence holding a batch slot (continuous batching).
struct Sequence {
  int64_t request = 0;
  int slot = 0;
  int64_t prefilled = 0; ///< prompt tokens in the cache
  int64_t generated = 0; ///< output tokens sampled
  int64_t reservedBlocks = 0; ///< its own, apart from a shared prefix's
  int64_t prefix = -1;        ///< the cached prefix it shares, if any
};

/// The full blocks of a shared prefix kept in the KV cache.
struct CachedPrefix {
  int64_t blocks = 0;
  int64_t users = 0; ///< running sequences sharing them
  double lastUseUs = 0;
};

class Simulation {
public:
  Simulation(const std::vector<Request> &requests, const ServerOptions &o,
             StepCostModel &costs)
      : o_(o), costs_(costs) {
    result_.requests.reserve(requests.size());
    for (const Request &r : requests) {
      RequestRecord rec;
      rec.request = r;
      result_.requests.push_back(std::move(rec));
    }
    result_.kvBlocks = o.kvBlocks;
  }

  ServeResult run() {
    if (o_.batching == Batching::Continuous)
      runContinuous();
    else
      runStatic();
    return std::move(result_);
  }

private:
  double arrivalUs(size_t i) const {
    return result_.requests[i].request.arrivalS * 1e6;
  }

  /// Moves the requests that arrived by `now_` into the queue, or rejects
  /// them with the reason `why` gives (empty: accepted).
  void arrive(const std::function<std::string(const Request &)> &why) {
    while (next_ < result_.requests.size() && arrivalUs(next_) <= now_) {
      RequestRecord &rec = result_.requests[next_];
      std::string reason = why(rec.request);
      if (reason.empty()) {
        waiting_.push_back(static_cast<int64_t>(next_));
      } else {
        rec.rejected = true;
        rec.reason = std::move(reason);
      }
      ++next_;
    }
  }

  /// Nothing to run: the clock jumps to the next arrival. False at the end.
  bool idle() {
    if (next_ == result_.requests.size())
      return false;
    now_ = std::max(now_, arrivalUs(next_));
    return true;
  }

  /// A step of a continuous batch costs its padded shape under the bucket
  /// rule; a static batch's step is a warmup shape's program, simulated as
  /// it is.
  StepRecord &step(StepKind kind, const StepShape &exact,
                   const StepShape &shape, int64_t inputTokens,
                   int64_t logitRows, int64_t sampled) {
    const double device = o_.batching == Batching::Static
                              ? costs_.cost(shape).deviceUs
                              : deviceUs(costs_, shape, o_.buckets);
    StepRecord s;
    s.startUs = now_;
    s.kind = kind;
    s.exact = exact;
    s.shape = shape;
    s.time = stepTime(o_.host, device, inputTokens, logitRows, sampled);
    result_.steps.push_back(std::move(s));
    return result_.steps.back();
  }

  void token(int64_t request, double at) {
    RequestRecord &rec = result_.requests[static_cast<size_t>(request)];
    if (rec.tokenUs.empty())
      rec.firstTokenUs = at;
    rec.tokenUs.push_back(at);
    if (static_cast<int64_t>(rec.tokenUs.size()) ==
        rec.request.outputTokens)
      rec.finishUs = at;
  }

  void schedule(int64_t request, int slot) {
    RequestRecord &rec = result_.requests[static_cast<size_t>(request)];
    rec.scheduledUs = now_;
    rec.slot = slot;
  }

  // Continuous batching.
  void runContinuous() {
    result_.slots = o_.maxNumSeqs;
    std::vector<bool> slotFree(static_cast<size_t>(o_.maxNumSeqs), true);
    std::vector<Sequence> running; // in admission order
    int64_t freeBlocks = o_.kvBlocks;
    std::map<int64_t, CachedPrefix> prefixes; // by prefix id
    bool lastWasPrefill = false;
    // Frees the blocks of the least recently used prefix no sequence
    // shares (the lowest id on a tie), except `keep`; false when none.
    auto evict = [&](int64_t keep) {
      auto victim = prefixes.end();
      for (auto it = prefixes.begin(); it != prefixes.end(); ++it)
        if (it->second.users == 0 && it->first != keep &&
            (victim == prefixes.end() ||
             it->second.lastUseUs < victim->second.lastUseUs))
          victim = it;
      if (victim == prefixes.end())
        return false;
      freeBlocks += victim->second.blocks;
      prefixes.erase(victim);
      return true;
    };
    auto why = [&](const Request &r) -> std::string {
      const int64_t total = r.promptTokens + r.outputTokens;
      if (total > o_.maxModelLen)
        return fmt::format("prompt + output tokens ({}) exceed max-model-len "
                           "({})",
                           total, o_.maxModelLen);
      if (blocksFor(total) > o_.kvBlocks)
        return fmt::format("needs {} KV-cache blocks, the cache has {}",
                           blocksFor(total), o_.kvBlocks);
      return {};
    };
    while (true) {
      arrive(why);
      // Admission, first come first served: the head of the queue waits
      // for a slot and for its blocks, and so does everyone behind it.
      while (!waiting_.empty() &&
             static_cast<int64_t>(running.size()) < o_.maxNumSeqs) {
        RequestRecord &rec =
            result_.requests[static_cast<size_t>(waiting_.front())];
        const Request &r = rec.request;
        auto hit = o_.prefixCaching && r.prefixId >= 0
                       ? prefixes.find(r.prefixId)
                       : prefixes.end();
        const int64_t shared = hit != prefixes.end() ? hit->second.blocks : 0;
        const int64_t blocks =
            blocksFor(r.promptTokens + r.outputTokens) - shared;
        while (blocks > freeBlocks && evict(r.prefixId)) {
        }
        if (blocks > freeBlocks)
          break;
        freeBlocks -= blocks;
        const int slot = static_cast<int>(
            std::find(slotFree.begin(), slotFree.end(), true) -
            slotFree.begin());
        slotFree[static_cast<size_t>(slot)] = false;
        Sequence seq{waiting_.front(), slot, 0, 0, blocks, -1};
        if (shared > 0) {
          ++hit->second.users;
          hit->second.lastUseUs = now_;
          seq.prefix = r.prefixId;
          // At least the prompt's last token is computed: its logits give
          // the first output token.
          seq.prefilled = std::min(shared * kBlockTokens, r.promptTokens - 1);
          rec.cachedTokens = seq.prefilled;
        }
        running.push_back(seq);
        schedule(waiting_.front(), slot);
        waiting_.pop_front();
      }
      if (running.empty()) {
        SPYRE_ASSERT(waiting_.empty(),
                     "an accepted request fits an empty server");
        if (!idle())
          return;
        continue;
      }
      auto prefilling = std::find_if(running.begin(), running.end(),
                                     [&](const Sequence &s) {
                                       return s.prefilled <
                                              promptOf(s.request);
                                     });
      const bool anyDecoding =
          std::any_of(running.begin(), running.end(), [&](const Sequence &s) {
            return s.prefilled == promptOf(s.request);
          });
      if (prefilling != running.end() && (!anyDecoding || !lastWasPrefill)) {
        Sequence &s = *prefilling;
        const int64_t prompt = promptOf(s.request);
        const int64_t n = std::min(o_.chunkSize, prompt - s.prefilled);
        const bool last = s.prefilled + n == prompt;
        // A later chunk is a prefill after the earlier chunks' tokens.
        const StepShape exact{StepKind::Prefill, 1, n, s.prefilled};
        StepRecord &st =
            step(StepKind::Prefill, exact, padded(exact), n, 1, last ? 1 : 0);
        st.slots.push_back({s.slot, s.request});
        s.prefilled += n;
        // The prefix's full blocks, once computed, are kept for later
        // requests (unless another sequence kept them first).
        const Request &r =
            result_.requests[static_cast<size_t>(s.request)].request;
        const int64_t full = r.prefixTokens / kBlockTokens;
        if (o_.prefixCaching && r.prefixId >= 0 && s.prefix < 0 && full > 0 &&
            s.prefilled >= full * kBlockTokens && !prefixes.count(r.prefixId)) {
          prefixes[r.prefixId] = {full, 1, st.endUs()};
          s.reservedBlocks -= full;
          s.prefix = r.prefixId;
        }
        if (last) {
          s.generated = 1;
          token(s.request, st.endUs());
        }
        lastWasPrefill = true;
      } else {
        int64_t batch = 0, context = 0;
        for (const Sequence &s : running)
          if (s.prefilled == promptOf(s.request)) {
            ++batch;
            context = std::max(context, s.prefilled + s.generated - 1);
          }
        const StepShape exact{StepKind::Decode, batch, 1, context};
        StepRecord &st = step(StepKind::Decode, exact, padded(exact), batch,
                              batch, batch);
        for (Sequence &s : running)
          if (s.prefilled == promptOf(s.request)) {
            st.slots.push_back({s.slot, s.request});
            ++s.generated;
            token(s.request, st.endUs());
          }
        lastWasPrefill = false;
      }
      StepRecord &st = result_.steps.back();
      now_ = st.endUs();
      // Finished sequences leave.
      for (auto it = running.begin(); it != running.end();) {
        if (it->generated == outputOf(it->request)) {
          freeBlocks += it->reservedBlocks;
          if (it->prefix >= 0) {
            CachedPrefix &p = prefixes.at(it->prefix);
            --p.users;
            p.lastUseUs = now_;
          }
          slotFree[static_cast<size_t>(it->slot)] = true;
          it = running.erase(it);
        } else {
          ++it;
        }
      }
      st.occupied = static_cast<int64_t>(running.size());
      for (const Sequence &s : running)
        st.kvBlocksUsed += blocksFor(s.prefilled + s.generated) -
                           (s.prefix >= 0 ? prefixes.at(s.prefix).blocks : 0);
      for (const auto &[id, p] : prefixes)
        st.kvBlocksUsed += p.blocks;
      st.waiting = static_cast<int64_t>(waiting_.size());
    }
  }

  // Static batching.
  void runStatic() {
    std::vector<WarmupShape> shapes = o_.warmupShapes;
    std::stable_sort(shapes.begin(), shapes.end(),
                     [](const WarmupShape &a, const WarmupShape &b) {
                       return std::tie(a.promptLength, a.newTokens, a.batch) <
                              std::tie(b.promptLength, b.newTokens, b.batch);
                     });
    for (const WarmupShape &w : shapes)
      result_.slots = std::max(result_.slots, w.batch);
    auto fits = [](const WarmupShape &w, const Request &r) {
      return r.promptTokens <= w.promptLength && r.outputTokens <= w.newTokens;
    };
    why_ = [&](const Request &r) -> std::string {
      for (const WarmupShape &w : shapes)
        if (fits(w, r))
          return {};
      return fmt::format("no warmup shape fits a prompt of {} and {} new "
                         "tokens",
                         r.promptTokens, r.outputTokens);
    };
    while (true) {
      arrive(why_);
      if (waiting_.empty()) {
        if (!idle())
          return;
        continue;
      }
      const Request &head =
          result_.requests[static_cast<size_t>(waiting_.front())].request;
      const WarmupShape &w = *std::find_if(
          shapes.begin(), shapes.end(),
          [&](const WarmupShape &s) { return fits(s, head); });
      std::vector<int64_t> batch;
      while (!waiting_.empty() && static_cast<int64_t>(batch.size()) < w.batch &&
             fits(w, result_.requests[static_cast<size_t>(waiting_.front())]
                         .request)) {
        schedule(waiting_.front(), static_cast<int>(batch.size()));
        batch.push_back(waiting_.front());
        waiting_.pop_front();
      }
      const int64_t real = static_cast<int64_t>(batch.size());
      const int64_t blocks = w.batch * blocksFor(w.promptLength + w.newTokens);
      int64_t longest = 0, longestPrompt = 0;
      for (int64_t r : batch) {
        longest = std::max(longest, outputOf(r));
        longestPrompt = std::max(longestPrompt, promptOf(r));
      }
      // The prefill of the whole padded batch samples every real sequence's
      // first token.
      const StepShape prefill =
          padded({StepKind::Prefill, w.batch, w.promptLength, 0});
      StepRecord *st = &step(StepKind::Prefill,
                             {StepKind::Prefill, real, longestPrompt, 0},
                             prefill, w.batch * w.promptLength, w.batch, real);
      for (size_t i = 0; i < batch.size(); ++i) {
        st->slots.push_back({static_cast<int>(i), batch[i]});
        token(batch[i], st->endUs());
      }
      finishStaticStep(*st, longest > 1 ? real : 0, longest > 1 ? blocks : 0);
      // The program's cache holds the shape's prompt and new tokens: every
      // decode step runs at that length, whatever the batch has produced.
      const StepShape decode = padded(
          {StepKind::Decode, w.batch, 1, w.promptLength + w.newTokens - 1});
      for (int64_t k = 1; k < longest; ++k) {
        int64_t live = 0;
        for (int64_t r : batch)
          live += k < outputOf(r) ? 1 : 0;
        st = &step(StepKind::Decode,
                   {StepKind::Decode, live, 1, w.promptLength + k - 1}, decode,
                   w.batch, w.batch, live);
        for (size_t i = 0; i < batch.size(); ++i)
          if (k < outputOf(batch[i])) {
            st->slots.push_back({static_cast<int>(i), batch[i]});
            token(batch[i], st->endUs());
          }
        finishStaticStep(*st, k + 1 < longest ? real : 0,
                         k + 1 < longest ? blocks : 0);
      }
    }
  }

  void finishStaticStep(StepRecord &st, int64_t occupied, int64_t blocks) {
    now_ = st.endUs();
    arrive(why_);
    st.occupied = occupied;
    st.kvBlocksUsed = blocks;
    st.waiting = static_cast<int64_t>(waiting_.size());
  }

  int64_t promptOf(int64_t r) const {
    return result_.requests[static_cast<size_t>(r)].request.promptTokens;
  }
  int64_t outputOf(int64_t r) const {
    return result_.requests[static_cast<size_t>(r)].request.outputTokens;
  }

  const ServerOptions &o_;
  StepCostModel &costs_;
  ServeResult result_;
  std::deque<int64_t> waiting_;
  /// Why a request is rejected on arrival (empty: it is not).
  std::function<std::string(const Request &)> why_;
  size_t next_ = 0;
  double now_ = 0;
};

} // namespace

WarmupShape parseWarmupShape(const std::string &text,
                             const std::string &flag) {
  auto usage = [&](const std::string &message) {
    return UserError(SourceLoc{flag}, message, ExitCode::Usage);
  };
  std::vector<int64_t> v;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    const std::string part = text.substr(
        start, colon == std::string::npos ? std::string::npos : colon - start);
    int64_t x = 0;
    if (parseInt64(part, x) != IntParse::Ok || x < 1 || x > kMaxRequestTokens)
      throw usage(fmt::format("expected PROMPT:NEW_TOKENS:BATCH, whole "
                              "numbers in [1, {}], got '{}'",
                              kMaxRequestTokens, text));
    v.push_back(x);
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  if (v.size() != 3)
    throw usage(fmt::format("expected PROMPT:NEW_TOKENS:BATCH, got '{}'", text));
  if (v[2] > 1024)
    throw usage(fmt::format("batch must be in [1, 1024], got {}", v[2]));
  return {v[0], v[1], v[2]};
}

void checkServerOptions(const ServerOptions &o) {
  auto usage = [](const std::string &flag, const std::string &message) {
    return UserError(SourceLoc{flag}, message, ExitCode::Usage);
  };
  if (o.batching == Batching::Continuous) {
    if (o.kvBlocks < 1)
      throw usage("--num-kv-blocks", "the KV cache has no block");
    return;
  }
  if (o.warmupShapes.empty())
    throw usage("--warmup-shape",
                "static batching needs at least one warmup shape");
  for (const WarmupShape &w : o.warmupShapes) {
    const int64_t blocks = w.batch * blocksFor(w.promptLength + w.newTokens);
    if (blocks > o.kvBlocks)
      throw usage("--warmup-shape",
                  fmt::format("{}:{}:{} needs {} KV-cache blocks, the cache "
                              "has {}",
                              w.promptLength, w.newTokens, w.batch, blocks,
                              o.kvBlocks));
  }
}

ServeResult simulateServer(const std::vector<Request> &requests,
                           const ServerOptions &options, StepCostModel &costs) {
  checkServerOptions(options);
  return Simulation(requests, options, costs).run();
}

} // namespace spyre::serve
