// A deterministic discrete-event model of one server over a request trace
// (docs/serve.md): requests arrive, wait, are admitted into batch slots, and
// run as a sequence of steps, each a prefill (chunk) or a decode step whose
// time is the host's share plus the device's (serve/StepCost.h). Two
// batching modes, as vllm-spyre has them:
//
// - static: the programs are compiled for warmup shapes (prompt length, new
//   tokens, batch); a request is padded to the smallest shape it fits and
//   rejected when none fits; a batch of requests of one shape is prefilled
//   together and decodes until its longest request ends;
// - continuous: up to max-num-seqs sequences of at most max-model-len
//   tokens; finished sequences leave and waiting ones join between steps;
//   prompts are prefilled one sequence at a time in chunks of at most
//   chunk-size tokens, a chunk and a decode step of the running sequences
//   taking turns; a sequence is admitted only when the paged KV cache
//   (64-token blocks) has blocks for its prompt and its whole output. With
//   prefix caching, the full blocks of a shared prompt prefix (the trace's
//   prefix_id) stay in the cache once computed: a later request naming the
//   prefix shares them and prefills only the rest of its prompt; blocks no
//   sequence uses are evicted, least recently used first, when an
//   admission needs room.
//
// Time advances only at step boundaries: a request arriving during a step
// waits for the step's end. Nothing here reads a clock or a random source.
#pragma once

#include "serve/StepCost.h"
#include "serve/Trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre::serve {

enum class Batching { Continuous, Static };

struct WarmupShape {
  int64_t promptLength = 0;
  int64_t newTokens = 0;
  int64_t batch = 0;
};

struct ServerOptions {
  Batching batching = Batching::Continuous;
  int64_t maxNumSeqs = 4;
  int64_t maxModelLen = 4096;
  int64_t chunkSize = 512;
  /// KV-cache blocks of kBlockTokens tokens on the device.
  int64_t kvBlocks = 0;
  /// Continuous: keep the full blocks of shared prefixes for later
  /// requests (vLLM's automatic prefix caching).
  bool prefixCaching = true;
  std::vector<WarmupShape> warmupShapes; ///< static batching
  BucketRule buckets;
  HostCosts host;
};

/// What happened to one request.
struct RequestRecord {
  Request request;
  bool rejected = false;
  std::string reason; ///< why it was rejected
  double scheduledUs = 0; ///< its first step started
  double firstTokenUs = 0;
  double finishUs = 0;
  int slot = -1;
  /// Prompt tokens found in the prefix cache, not prefilled.
  int64_t cachedTokens = 0;
  /// When each output token was ready (the end of the step that sampled it).
  std::vector<double> tokenUs;
};

/// One step of the server.
struct StepRecord {
  double startUs = 0;
  StepTime time;
  StepKind kind = StepKind::Decode;
  StepShape exact;  ///< what the running sequences needed
  /// What the device ran: the exact shape padded to whole KV blocks
  /// (continuous), or the warmup shape (static).
  StepShape shape;
  /// The slots in the step and the request in each.
  std::vector<std::pair<int, int64_t>> slots;
  int64_t occupied = 0;   ///< sequences holding a slot after the step
  int64_t kvBlocksUsed = 0; ///< blocks holding tokens after the step
  int64_t waiting = 0;    ///< requests waiting after the step
  double endUs() const { return startUs + time.totalUs(); }
};

struct ServeResult {
  std::vector<RequestRecord> requests; ///< in trace order
  std::vector<StepRecord> steps;
  int64_t slots = 0; ///< batch slots of the server
  int64_t kvBlocks = 0;
};

/// Parses a warmup shape `PROMPT:NEW_TOKENS:BATCH` (whole numbers, prompt
/// and new tokens in [1, kMaxRequestTokens], batch in [1, 1024]); a
/// UserError (usage) located at `flag` otherwise.
WarmupShape parseWarmupShape(const std::string &text, const std::string &flag);

/// Checks the options against the model: a UserError (usage) naming the
/// flag when a warmup shape does not fit max-model-len or the KV cache.
void checkServerOptions(const ServerOptions &options);

/// Runs the trace through the server. Step costs come from `costs`.
ServeResult simulateServer(const std::vector<Request> &requests,
                           const ServerOptions &options, StepCostModel &costs);

} // namespace spyre::serve
