// The persistent device (llm/LlmDevice.h): weights written once, a prefill
// then decode steps against the same device memory, the cache written in
// place. Greedy generation on the tiny Granite and Llama configs gives the
// tokens of the double-precision reference (a full forward pass per token,
// no cache) and logits within the DL16 tolerance of docs/compiler.md.
#include "llm/LlmDevice.h"
#include "hw/HwConfig.h"
#include "run/RunModel.h"
#include "sim/core/TensorIo.h"
#include "support/Diagnostic.h"
#include "support/TensorCompare.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spyre::llm {
namespace {

LlmConfig load(const std::string &file) {
  return loadLlmConfig(test::srcPath("examples/llm/" + file));
}

std::vector<int64_t> prompt(int64_t n, int64_t vocab, int64_t salt) {
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < n; ++i)
    tokens.push_back((i * 37 + salt * 11 + 5) % vocab);
  return tokens;
}

/// Prefill of `n` tokens and `steps` greedy decode steps on the device,
/// against the reference: tokens equal, logits within the tolerance, no
/// finding and no host op in any step.
void expectGenerationMatches(const std::string &file, int64_t n,
                             int64_t steps, bool hostSampling = false) {
  const LlmConfig config = load(file);
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  LlmDeviceOptions o;
  o.capacity = n + steps + 1;
  o.hostSampling = hostSampling;
  LlmDevice device(config, hw, o);
  const std::vector<int64_t> tokens = prompt(n, config.vocabSize, 0);

  std::vector<DeviceStep> run = {device.prefill({0}, {tokens})};
  for (int64_t i = 0; i < steps; ++i)
    run.push_back(device.decode({0}, {run.back().tokens[0]}));
  EXPECT_EQ(device.position(0), n + steps);

  const ReferenceGeneration ref =
      referenceGenerate(config, config.numLayers, device.storedWeights(),
                        device.embeddingTable(), tokens, steps);
  ASSERT_EQ(ref.tokens.size(), run.size());
  for (size_t i = 0; i < run.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_TRUE(run[i].run.findings.empty()) << run[i].run.findings.front();
    EXPECT_EQ(run[i].run.hostOps, 0u);
    EXPECT_EQ(run[i].greedyOnDevice, !hostSampling);
    EXPECT_EQ(run[i].tokens[0], ref.tokens[i]);
    const Tolerance tol = run::outputTolerance(ref.logits[i]);
    const TensorComparison c =
        compareTensors(run[i].logits[0], ref.logits[i], tol);
    EXPECT_TRUE(c.ok()) << c.outside << " logits outside, max difference "
                        << c.maxAbsDiff;
  }
}

TEST(LlmDevice, ChunkedPrefillGivesTheReferencesTokens) {
  // Two prompts of 130 tokens prefilled in chunks of 50, 14, 26 and 40
  // (each a prefill after the tokens before it: the chunks end inside a
  // page, on a page's end, inside the next page and inside the one after),
  // then a decode step: the tokens are the reference's and the logits
  // within the tolerance. Contiguous, and paged with the two sequences'
  // chunks taking turns, so that each sequence's pages are runs of one
  // page and the last chunk writes over a partial page and into another.
  // Heads of 128 (contiguous) take the fused attention over the cache's
  // keys joined to the new ones; heads of 256 (paged), which the fused op
  // does not take, the stored scores, each run of pages scored apart.
  LlmConfig wide = load("tiny-granite.json");
  wide.headDim = 256;
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  const int64_t n = 130, steps = 1;
  const std::vector<int64_t> chunks = {50, 14, 26, 40};
  for (const auto &[config, paged] :
       {std::pair{load("tiny-granite.json"), false}, std::pair{wide, true}}) {
    SCOPED_TRACE(std::string(paged ? "paged" : "contiguous") + ", head_dim " +
                 std::to_string(config.headDim));
    LlmDeviceOptions o;
    o.slots = 2;
    o.capacity = n + steps + 1;
    o.paged = paged;
    LlmDevice device(config, hw, o);
    const std::vector<std::vector<int64_t>> prompts = {
        prompt(n, config.vocabSize, 0), prompt(n, config.vocabSize, 1)};
    std::vector<std::vector<DeviceStep>> runs(2);
    int64_t at = 0;
    for (int64_t c : chunks) {
      for (int64_t b = 0; b < 2; ++b) {
        const std::vector<int64_t> piece(
            prompts[static_cast<size_t>(b)].begin() + at,
            prompts[static_cast<size_t>(b)].begin() + at + c);
        // Paged: one sequence a step, so that their pages interleave;
        // contiguous: both in one step.
        if (paged) {
          runs[static_cast<size_t>(b)].push_back(device.prefill({b}, {piece}));
        } else if (b == 1) {
          const std::vector<int64_t> first(prompts[0].begin() + at,
                                           prompts[0].begin() + at + c);
          DeviceStep both = device.prefill({0, 1}, {first, piece});
          for (size_t s = 0; s < 2; ++s) {
            DeviceStep one = both;
            one.tokens = {both.tokens[s]};
            one.logits = {both.logits[s]};
            runs[s].push_back(std::move(one));
          }
        }
      }
      at += c;
    }
    for (int64_t b = 0; b < 2; ++b)
      EXPECT_EQ(device.position(b), n);
    if (paged) {
      EXPECT_EQ(device.blockTable(0), (std::vector<int64_t>{0, 2, 4}));
    }
    for (int64_t i = 0; i < steps; ++i) {
      const DeviceStep d = device.decode(
          {0, 1}, {runs[0].back().tokens[0], runs[1].back().tokens[0]});
      for (size_t s = 0; s < 2; ++s) {
        DeviceStep one = d;
        one.tokens = {d.tokens[s]};
        one.logits = {d.logits[s]};
        runs[s].push_back(std::move(one));
      }
    }
    for (size_t b = 0; b < 2; ++b) {
      const ReferenceGeneration ref =
          referenceGenerate(config, config.numLayers, device.storedWeights(),
                            device.embeddingTable(), prompts[b], steps);
      // The last chunk gives the first token; the decode steps the rest.
      const size_t first = chunks.size() - 1;
      ASSERT_EQ(runs[b].size(), first + ref.tokens.size());
      for (size_t i = 0; i < ref.tokens.size(); ++i) {
        SCOPED_TRACE("sequence " + std::to_string(b) + ", token " +
                     std::to_string(i));
        const DeviceStep &st = runs[b][first + i];
        EXPECT_TRUE(st.run.findings.empty()) << st.run.findings.front();
        EXPECT_EQ(st.run.hostOps, 0u);
        EXPECT_EQ(st.tokens[0], ref.tokens[i]);
        const Tolerance tol = run::outputTolerance(ref.logits[i]);
        const TensorComparison c =
            compareTensors(st.logits[0], ref.logits[i], tol);
        EXPECT_TRUE(c.ok())
            << c.outside << " logits outside, max difference " << c.maxAbsDiff;
      }
    }
  }
}

TEST(LlmDevice, TinyGraniteGenerationMatchesReference) {
  // 60 prompt tokens and 8 steps: the steps cross from the first cache page
  // into the second.
  expectGenerationMatches("tiny-granite.json", 60, 8);
}

TEST(LlmDevice, TinyLlamaGenerationMatchesReference) {
  expectGenerationMatches("tiny-llama.json", 60, 8);
}

TEST(LlmDevice, HostSamplingGivesTheSameTokens) {
  expectGenerationMatches("tiny-llama.json", 60, 3, true);
}


TEST(LlmDevice, StepsMoveTokenIdsOverPcieNotRowsOrLogits) {
  const LlmConfig config = load("tiny-llama.json");
  const hw::HwConfig hw = hw::loadConfigOrDefault("");
  for (bool hostSampling : {false, true}) {
    SCOPED_TRACE(hostSampling ? "host sampling" : "arg-max on the device");
    LlmDeviceOptions o;
    o.slots = 2;
    o.capacity = 64;
    o.hostSampling = hostSampling;
    LlmDevice device(config, hw, o);
    const DeviceStep pre = device.prefill(
        {0, 1}, {prompt(10, config.vocabSize, 0), prompt(10, config.vocabSize, 1)});
    const DeviceStep step = device.decode({0, 1}, pre.tokens);
    for (const DeviceStep *s : {&pre, &step}) {
      const auto tokens =
          static_cast<uint64_t>(s->shape.batch * s->shape.tokens);
      // In: 4 bytes an id and 4 a position; no hidden rows, and no rotary
      // tables: the device keeps them and gathers its positions' rows.
      EXPECT_EQ(s->shape.rotary, Rotary::Ids);
      EXPECT_EQ(s->inputBytes, 4 * tokens + 4 * tokens);
      // Out: an id per sequence, or its logits.
      EXPECT_EQ(s->outputBytes,
                hostSampling ? 2u * 2 * static_cast<uint64_t>(config.vocabSize)
                             : 2u * 4);
      EXPECT_EQ(s->outputCycles, device.device().transferCycles(s->outputBytes));
      // The tokens are the arg-max of the logits either way.
      for (size_t b = 0; b < 2; ++b)
        EXPECT_EQ(s->tokens[b], argmax(s->logits[b]));
    }
  }
}

/// Positions of slot `slot`'s keys in layer `layer` that hold a nonzero
/// element (of any head or dim).
std::vector<int64_t> filledPositions(LlmDevice &device, int64_t layer,
                                     int64_t slot) {
  const isa::TensorDecl t = device.cacheTensor(layer, slot, false);
  const std::vector<double> v =
      sim::readTensorValues(t, device.device().memory());
  const int64_t L = t.hostShape[2];
  std::vector<int64_t> filled;
  for (int64_t p = 0; p < L; ++p)
    for (int64_t r = 0; r < t.hostShape[0] * t.hostShape[1]; ++r)
      if (v[static_cast<size_t>(r * L + p)] != 0) {
        filled.push_back(p);
        break;
      }
  return filled;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(i);
  return out;
}

TEST(LlmDevice, WritesEachNewTokenIntoItsSlotInPlace) {
  const LlmConfig config = load("tiny-granite.json");
  LlmDeviceOptions o;
  o.slots = 2;
  // 64 pages per tensor, 2 MiB: a copy of the cache would write 8 MiB.
  o.capacity = 4096;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  DeviceStep s = device.prefill({1}, {prompt(62, config.vocabSize, 1)});
  EXPECT_EQ(filledPositions(device, 1, 1), iota(62));
  EXPECT_TRUE(filledPositions(device, 1, 0).empty()); // the other slot
  for (int64_t p = 62; p < 66; ++p) {
    s = device.decode({1}, s.tokens);
    EXPECT_EQ(filledPositions(device, 0, 1), iota(p + 1)) << "position " << p;
    EXPECT_EQ(filledPositions(device, 1, 1), iota(p + 1)) << "position " << p;
    // One page per layer, key and value, is rewritten (its lanes moved
    // through transposes: a few pages' worth of writes) and the step's own
    // activations: about 0.75 MiB at most here, never the cache.
    EXPECT_LT(s.run.writeBytes, 1u << 20) << "position " << p;
  }
  device.release(1);
  EXPECT_TRUE(filledPositions(device, 0, 1).empty());
  EXPECT_EQ(device.position(1), 0);
}

TEST(LlmDevice, DecodesSequencesAtTheirOwnPositions) {
  // Two sequences prefilled apart (30 and 64 tokens), then decoded in one
  // batch at positions 30.. and 64..: each as the reference alone.
  const LlmConfig config = load("tiny-llama.json");
  LlmDeviceOptions o;
  o.slots = 2;
  o.capacity = 70;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  const std::vector<std::vector<int64_t>> prompts = {
      prompt(30, config.vocabSize, 2), prompt(64, config.vocabSize, 3)};
  std::vector<int64_t> next = {device.prefill({0}, {prompts[0]}).tokens[0],
                               device.prefill({1}, {prompts[1]}).tokens[0]};
  std::vector<std::vector<int64_t>> got = {{next[0]}, {next[1]}};
  std::vector<std::vector<std::vector<double>>> logits(2);
  for (int i = 0; i < 3; ++i) {
    DeviceStep s = device.decode({0, 1}, next);
    EXPECT_EQ(s.shape.positions, (std::vector<int64_t>{30 + i, 64 + i}));
    EXPECT_TRUE(s.run.findings.empty());
    next = s.tokens;
    for (size_t b = 0; b < 2; ++b) {
      got[b].push_back(s.tokens[b]);
      logits[b].push_back(s.logits[b]);
    }
  }
  for (size_t b = 0; b < 2; ++b) {
    const ReferenceGeneration ref =
        referenceGenerate(config, config.numLayers, device.storedWeights(),
                          device.embeddingTable(), prompts[b], 3);
    EXPECT_EQ(got[b], ref.tokens) << "sequence " << b;
    for (size_t i = 0; i < 3; ++i)
      EXPECT_TRUE(compareTensors(logits[b][i], ref.logits[i + 1],
                                 run::outputTolerance(ref.logits[i + 1]))
                      .ok())
          << "sequence " << b << ", step " << i;
  }
}

TEST(LlmDevice, CheckCatchesADamagedCache) {
  // The decode steps read what the prefill left: zero the first page of
  // layer 0's keys and the logits leave the tolerance.
  const LlmConfig config = load("tiny-llama.json");
  LlmDeviceOptions o;
  o.capacity = 64;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  const std::vector<int64_t> tokens = prompt(40, config.vocabSize, 4);
  DeviceStep s = device.prefill({0}, {tokens});
  const isa::TensorDecl keys = device.cacheTensor(0, 0, false);
  const std::vector<uint8_t> zeros(
      static_cast<size_t>(config.numKvHeads * config.headDim) *
          isa::kStickBytes,
      0);
  device.device().memory().write(keys.address * isa::kStickBytes, zeros.data(),
                                 zeros.size());
  s = device.decode({0}, s.tokens);
  const ReferenceGeneration ref =
      referenceGenerate(config, config.numLayers, device.storedWeights(),
                        device.embeddingTable(), tokens, 1);
  EXPECT_FALSE(compareTensors(s.logits[0], ref.logits[1],
                              run::outputTolerance(ref.logits[1]))
                   .ok());
}

TEST(LlmDevice, PagedCacheFollowsEachSequencesBlockTable) {
  // A pool of 4 pages shared by 3 slots. Slot 0 gets page 0, slot 1 page 1;
  // slot 0 is released and takes 130 tokens: pages 0, 2, 3, two runs. Its
  // prefill writes both runs, and its decode steps read them as two inputs
  // and write page 3 in place; slot 1 decodes beside it. Both as the
  // reference; a third sequence finds the pool full until slot 1 leaves.
  const LlmConfig config = load("tiny-llama.json");
  LlmDeviceOptions o;
  o.slots = 3;
  o.capacity = 192;
  o.paged = true;
  o.pages = 4;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  EXPECT_EQ(device.freePages(), 4);
  device.prefill({0}, {prompt(10, config.vocabSize, 5)});
  const std::vector<int64_t> shortPrompt = prompt(10, config.vocabSize, 6);
  std::vector<int64_t> next = {0, device.prefill({1}, {shortPrompt}).tokens[0]};
  device.release(0);
  EXPECT_EQ(device.blockTable(0), std::vector<int64_t>{});
  const std::vector<int64_t> longPrompt = prompt(130, config.vocabSize, 7);
  next[0] = device.prefill({0}, {longPrompt}).tokens[0];
  EXPECT_EQ(device.blockTable(0), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(device.blockTable(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(device.freePages(), 0);

  std::vector<std::vector<int64_t>> got = {{next[0]}, {next[1]}};
  std::vector<std::vector<std::vector<double>>> logits(2);
  for (int i = 0; i < 2; ++i) {
    DeviceStep s = device.decode({0, 1}, next);
    EXPECT_EQ(s.shape.pageRuns,
              (std::vector<std::vector<int64_t>>{{1, 1}, {}}));
    EXPECT_TRUE(s.run.findings.empty());
    next = s.tokens;
    for (size_t b = 0; b < 2; ++b) {
      got[b].push_back(s.tokens[b]);
      logits[b].push_back(s.logits[b]);
    }
  }
  const std::vector<std::vector<int64_t>> prompts = {longPrompt, shortPrompt};
  for (size_t b = 0; b < 2; ++b) {
    const ReferenceGeneration ref =
        referenceGenerate(config, config.numLayers, device.storedWeights(),
                          device.embeddingTable(), prompts[b], 2);
    EXPECT_EQ(got[b], ref.tokens) << "sequence " << b;
    for (size_t i = 0; i < 2; ++i)
      EXPECT_TRUE(compareTensors(logits[b][i], ref.logits[i + 1],
                                 run::outputTolerance(ref.logits[i + 1]))
                      .ok())
          << "sequence " << b << ", step " << i;
  }

  EXPECT_THROW(device.prefill({2}, {prompt(10, config.vocabSize, 8)}),
               UserError);
  EXPECT_THROW(device.decode({0, 0}, {1, 1}), UserError); // twice
  device.release(1);
  EXPECT_EQ(device.freePages(), 1);
  device.prefill({2}, {prompt(10, config.vocabSize, 8)});
  EXPECT_EQ(device.blockTable(2), std::vector<int64_t>{1});
}

TEST(LlmDevice, LoopedStepsComputeWhatUnrolledStepsCompute) {
  // Three layers of tiny Llama on a paged cache where a sequence's pages
  // are two runs (0, then 2 and 3, after a release): each step as one
  // layer's code in a loop over the layers' regions and as every layer's
  // own code give the very same bits, the reference's tokens, and the loop
  // makes the smaller program.
  LlmConfig config = load("tiny-llama.json");
  config.numLayers = 3;
  LlmDeviceOptions o;
  o.slots = 2;
  o.capacity = 192;
  o.paged = true;
  o.pages = 4;
  LlmDeviceOptions unrolledOptions = o;
  unrolledOptions.unrolled = true;
  LlmDevice looped(config, hw::loadConfigOrDefault(""), o);
  LlmDevice unrolled(config, hw::loadConfigOrDefault(""), unrolledOptions);
  const std::vector<int64_t> first = prompt(10, config.vocabSize, 5),
                             second = prompt(130, config.vocabSize, 6);
  std::vector<std::vector<int64_t>> got(2);
  std::vector<std::vector<std::vector<double>>> logits(2);
  for (LlmDevice *d : {&looped, &unrolled}) {
    d->prefill({0}, {first});
    d->prefill({1}, {prompt(10, config.vocabSize, 7)});
    d->release(0);
    const DeviceStep a = d->prefill({0}, {second});
    const DeviceStep b = d->decode({0}, {a.tokens[0]});
    EXPECT_EQ(d->blockTable(0), (std::vector<int64_t>{0, 2, 3}));
    EXPECT_EQ(b.shape.pageRuns, (std::vector<std::vector<int64_t>>{{1, 1}}));
    const DeviceStep c = d->decode({0}, {b.tokens[0]});
    for (const DeviceStep *step : {&a, &b, &c}) {
      EXPECT_TRUE(step->run.findings.empty()) << step->run.findings.front();
      got[d == &looped ? 0 : 1].push_back(step->tokens[0]);
      logits[d == &looped ? 0 : 1].push_back(step->logits[0]);
    }
  }
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(logits[0], logits[1]); // bit for bit, every step
  // And every layer's cache pages hold the same bits: the looped steps
  // wrote each layer's keys and values in place, where the unrolled did.
  for (int64_t layer = 0; layer < config.numLayers; ++layer)
    for (int64_t page = 0; page < 4; ++page)
      for (bool value : {false, true})
        EXPECT_EQ(sim::readTensorValues(looped.pageTensor(layer, page, value),
                                        looped.device().memory()),
                  sim::readTensorValues(unrolled.pageTensor(layer, page, value),
                                        unrolled.device().memory()))
            << "layer " << layer << ", page " << page
            << (value ? ", values" : ", keys");
  // (The last layer's first page holds the sequence's first 64 keys.)
  const std::vector<double> last = sim::readTensorValues(
      looped.pageTensor(config.numLayers - 1, 0, false),
      looped.device().memory());
  EXPECT_NE(std::count(last.begin(), last.end(), 0.0),
            static_cast<std::ptrdiff_t>(last.size()));
  const DeviceStep l = looped.decode({0}, {got[0].back()});
  const DeviceStep u = unrolled.decode({0}, {got[1].back()});
  EXPECT_EQ(l.tokens, u.tokens);
  ASSERT_EQ(l.logits.size(), 1u);
  EXPECT_EQ(l.logits, u.logits); // bit for bit
  EXPECT_LT(l.programBytes, u.programBytes);
  const ReferenceGeneration ref =
      referenceGenerate(config, config.numLayers, looped.storedWeights(),
                        looped.embeddingTable(), second, 3);
  got[0].push_back(l.tokens[0]);
  EXPECT_EQ(got[0], ref.tokens);
}

TEST(LlmDevice, HeadsTheRotaryOpCannotTakeKeepTheHostsTables) {
  // Heads of 64: the rotary op needs whole sticks per half, so the step
  // takes its positions' tables from the host (Rotary::Tables), and its two
  // layers still run in a loop; generation gives the reference's tokens.
  LlmConfig config = load("tiny-llama.json");
  config.numHeads = 4;
  config.numKvHeads = 2;
  config.headDim = 64;
  config.numLayers = 2;
  LlmDeviceOptions o;
  o.capacity = 64;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  const std::vector<int64_t> tokens = prompt(20, config.vocabSize, 3);
  std::vector<int64_t> got;
  DeviceStep step = device.prefill({0}, {tokens});
  EXPECT_EQ(step.shape.rotary, Rotary::Tables);
  // In: the ids, and cos and sin per token for each of q's 4 heads and k's
  // 2 (2 bytes an element): the tables at q's and k's shapes.
  EXPECT_EQ(step.inputBytes, 20u * 4 + 2 * 20 * (4 + 2) * 64 * 2);
  got.push_back(step.tokens[0]);
  for (int i = 0; i < 2; ++i) {
    step = device.decode({0}, {got.back()});
    EXPECT_TRUE(step.run.findings.empty()) << step.run.findings.front();
    got.push_back(step.tokens[0]);
  }
  const ReferenceGeneration ref =
      referenceGenerate(config, config.numLayers, device.storedWeights(),
                        device.embeddingTable(), tokens, 2);
  EXPECT_EQ(got, ref.tokens);
}

TEST(LlmDevice, RefusesAStepThePoolCannotHoldWhole) {
  // Two sequences of one full page each and one free page: a step of both
  // needs two new pages and is refused before either takes one.
  const LlmConfig config = load("tiny-llama.json");
  LlmDeviceOptions o;
  o.slots = 2;
  o.capacity = 128;
  o.paged = true;
  o.pages = 3;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  device.prefill({0, 1}, {prompt(64, config.vocabSize, 1),
                          prompt(64, config.vocabSize, 2)});
  EXPECT_EQ(device.freePages(), 1);
  EXPECT_THROW(device.decode({0, 1}, {1, 1}), UserError);
  EXPECT_EQ(device.freePages(), 1);
  EXPECT_EQ(device.blockTable(0), std::vector<int64_t>{0});
  EXPECT_EQ(device.blockTable(1), std::vector<int64_t>{1});
  EXPECT_EQ(device.position(0), 64);
  device.decode({1}, {1});
  EXPECT_EQ(device.blockTable(1), (std::vector<int64_t>{1, 2}));
}

TEST(LlmDevice, RefusesStepsPastTheCache) {
  const LlmConfig config = load("tiny-llama.json");
  LlmDeviceOptions o;
  o.capacity = 64;
  LlmDevice device(config, hw::loadConfigOrDefault(""), o);
  EXPECT_THROW(device.decode({0}, {1}), UserError); // nothing prefilled
  EXPECT_THROW(device.prefill({0}, {prompt(65, config.vocabSize, 0)}),
               UserError);
  EXPECT_THROW(device.prefill({1}, {prompt(4, config.vocabSize, 0)}),
               UserError); // no such slot
  EXPECT_THROW(device.prefill({0}, {{config.vocabSize}}), UserError);
  device.prefill({0}, {prompt(64, config.vocabSize, 0)});
  EXPECT_THROW(device.decode({0}, {1}), UserError); // the cache is full
}

} // namespace
} // namespace spyre::llm
