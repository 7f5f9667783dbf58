// `spyre serve`: a request trace through a model of one server with
// continuous or static batching, step times from simulated programs; and
// `spyre serve gen`, a synthetic trace (serve/Serve.h, serve/Trace.h;
// docs/serve.md).
#include "Commands.h"
#include "IntOption.h"

#include "run/RunModel.h"
#include "serve/Serve.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct ServeCliOptions {
  serve::ServeOptions run;
  std::string batching = "continuous";
  std::vector<std::string> warmupShapes;
  std::string slo;
  bool exactShapes = false;
  bool noPrefixCaching = false;
};

struct GenCliOptions {
  double rate = 0;
  std::string arrivals = "poisson";
  std::string prompt;
  std::string output;
  int64_t count = 0;
  uint64_t seed = 1;
  int64_t prefixTokens = 0;
  int64_t prefixGroups = 0;
  std::string file;
};

UserError usage(const std::string &flag, const std::string &message) {
  return UserError(SourceLoc{flag}, message, ExitCode::Usage);
}

int runServe(ServeCliOptions &o) {
  if (o.run.modelConfig.empty())
    throw usage("spyre", "serve: expected a model's config.json (or `spyre "
                         "serve gen`)");
  if (o.run.trace.empty())
    throw usage("spyre", "serve: a request trace is required (--requests "
                         "TRACE)");
  o.run.batching = o.batching == "static" ? serve::Batching::Static
                                          : serve::Batching::Continuous;
  for (const std::string &w : o.warmupShapes)
    o.run.warmupShapes.push_back(serve::parseWarmupShape(w, "--warmup-shape"));
  if (!o.slo.empty())
    o.run.slo = serve::parseSlo(o.slo);
  o.run.buckets.exact = o.exactShapes;
  o.run.prefixCaching = !o.noPrefixCaching;
  try {
    const serve::ServeReport report = serve::runServe(o.run);
    if (!o.run.outDir.empty())
      serve::writeServeOutputs(report);
    std::cout << serve::serveSummaryText(report);
    return static_cast<int>(ExitCode::Ok);
  } catch (const run::CompileError &e) {
    std::cout.flush();
    std::cerr << e.diagnostics();
    return e.internal() ? static_cast<int>(ExitCode::Internal)
                        : static_cast<int>(ExitCode::BadInput);
  }
}

int runGen(const GenCliOptions &o) {
  if (!(o.rate > 0) || o.rate > 1e6)
    throw usage("--rate", fmt::format("must be in (0, 1e6] requests per "
                                      "second, got {}",
                                      o.rate));
  serve::GenOptions g;
  g.rate = o.rate;
  g.arrivals = o.arrivals == "fixed" ? serve::Arrivals::Fixed
                                     : serve::Arrivals::Poisson;
  g.prompt = serve::parseLengthDist(o.prompt, "--prompt");
  g.output = serve::parseLengthDist(o.output, "--output");
  g.count = o.count;
  g.seed = o.seed;
  if ((o.prefixTokens > 0) != (o.prefixGroups > 0))
    throw usage(o.prefixTokens > 0 ? "--prefix-groups" : "--prefix-tokens",
                "--prefix-tokens and --prefix-groups come together");
  g.prefixTokens = o.prefixTokens;
  g.prefixGroups = o.prefixGroups;
  const std::vector<serve::Request> requests = serve::generateTrace(g);
  if (requests.back().arrivalS > serve::kMaxArrivalS)
    throw usage("--count", "the trace would last past 10^7 s; fewer requests "
                           "or a higher rate");
  const std::string csv = serve::traceCsv(requests);
  if (o.file.empty() || o.file == "-")
    std::cout << csv;
  else
    writeFileAtomic(o.file, csv);
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addServeCommand(CLI::App &app, Dispatch &dispatch) {
  auto o = std::make_shared<ServeCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "serve", "Simulate one server over a request trace (continuous or "
               "static batching, step times from simulated programs): TTFT, "
               "TPOT, ITL, E2E latency and throughput");
  cmd->add_option("model", o->run.modelConfig,
                  "Hugging Face config.json of the model (docs/llm.md)");
  cmd->add_option("--requests", o->run.trace,
                  "Request trace CSV (arrival_s,prompt_tokens,output_tokens "
                  "or the Azure trace's columns; optional prefix_id,"
                  "prefix_tokens)");
  cmd->add_option("-o,--output", o->run.outDir,
                  "Folder for requests.csv, summary.json, trace.json and "
                  "report.html");
  cmd->add_option("--config", o->run.hwConfig,
                  "Hardware config YAML (default: the built-in Spyre config)");
  cmd->add_option("--batching", o->batching,
                  "continuous (default) or static (warmup shapes)")
      ->check(CLI::IsMember({"continuous", "static"}));
  cmd->add_option("--max-num-seqs", o->run.maxNumSeqs,
                  "Continuous: sequences in a batch (default 4)")
      ->check(wholeNumberIn(1, 1024));
  cmd->add_option("--max-model-len", o->run.maxModelLen,
                  "Continuous: prompt plus output tokens of a sequence "
                  "(default 4096)")
      ->check(wholeNumberIn(1, serve::kMaxRequestTokens));
  cmd->add_option("--chunk-size", o->run.chunkSize,
                  "Continuous: prompt tokens prefilled in one step (default "
                  "512)")
      ->check(wholeNumberIn(1, serve::kMaxRequestTokens));
  cmd->add_option("--warmup-shape", o->warmupShapes,
                  "Static: a compiled shape PROMPT:NEW_TOKENS:BATCH "
                  "(repeatable)");
  cmd->add_option("--num-kv-blocks", o->run.numKvBlocks,
                  "KV-cache blocks of 64 tokens (default: the device memory "
                  "left after the weights)")
      ->check(wholeNumberIn(1, INT64_MAX / 1024));
  cmd->add_option("--memory-utilization", o->run.memoryUtilization,
                  "Share of device memory weights and KV cache may take "
                  "(default 0.9)")
      ->check(numberIn(0.01, 1.0, "share"));
  cmd->add_option("--slo", o->slo,
                  "Service-level objectives for goodput, milliseconds: "
                  "ttft=MS,itl=MS,tpot=MS,e2el=MS (any of them)");
  cmd->add_option("-O", o->run.optLevel,
                  "Optimisation level of the step programs (default -O2)")
      ->check(wholeNumberIn(0, 2));
  cmd->add_option("--simulated-layers", o->run.simulatedLayers,
                  "Decoder layers simulated per step shape (default 1); the "
                  "step's time scales them to the model's layers")
      ->check(wholeNumberIn(1, 1024));
  cmd->add_option("--context-bucket", o->run.buckets.contextBase,
                  "Decode context is simulated at this x a power of two "
                  "(default 256)")
      ->check(wholeNumberIn(1, 65536));
  cmd->add_flag("--exact-shapes", o->exactShapes,
                "Simulate every exact step shape (no buckets; slow)");
  cmd->add_flag("--no-prefix-caching", o->noPrefixCaching,
                "Continuous: keep no shared prefix's blocks for later "
                "requests (the trace's prefix_id column)");

  auto g = std::make_shared<GenCliOptions>();
  CLI::App *gen = cmd->add_subcommand(
      "gen", "Write a synthetic request trace: Poisson or fixed arrivals, "
             "fixed, uniform or lognormal lengths");
  gen->add_option("--rate", g->rate, "Requests per second")->required();
  gen->add_option("--arrivals", g->arrivals,
                  "poisson (default: exponential gaps) or fixed")
      ->check(CLI::IsMember({"poisson", "fixed"}));
  gen->add_option("--prompt", g->prompt,
                  "Prompt tokens: fixed:N, uniform:MIN:MAX or "
                  "lognormal:MEDIAN:SIGMA")
      ->required();
  gen->add_option("--output", g->output, "Output tokens, as --prompt")
      ->required();
  gen->add_option("--count", g->count, "Requests")
      ->required()
      ->check(wholeNumberIn(1, serve::kMaxTraceRows));
  gen->add_option("--seed", g->seed, "Seed (default 1)")
      ->check(wholeNumberIn(0, UINT64_MAX));
  gen->add_option("--prefix-tokens", g->prefixTokens,
                  "Tokens of a shared prefix added before each prompt")
      ->check(wholeNumberIn(1, serve::kMaxRequestTokens));
  gen->add_option("--prefix-groups", g->prefixGroups,
                  "Shared prefixes the prompts start with, one drawn "
                  "uniformly per request")
      ->check(wholeNumberIn(1, 1000000));
  gen->add_option("-o,--out", g->file, "CSV file to write (default: stdout)");
  gen->callback([g, &dispatch] {
    dispatch.run = [g] { return runGen(*g); };
  });
  cmd->callback([o, gen, &dispatch] {
    if (gen->parsed())
      return;
    dispatch.run = [o] { return runServe(*o); };
  });
}

} // namespace spyre::cli
