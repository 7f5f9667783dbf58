#include "llm/LlmDevice.h"

#include "compiler/ref/Evaluator.h"
#include "llm/LlmLoop.h"
#include "llm/LlmWeights.h"
#include "numerics/Dlf16.h"
#include "run/RunModel.h"
#include "sim/core/TensorIo.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace spyre::llm {

namespace {

using compiler::Value;

constexpr int64_t kHostBytes = 2; ///< fp16 on the host link

/// What the host sends with a step (the rest is kept on the device): its
/// token ids and positions, or the rotary tables of its positions.
bool isStepInput(const std::string &name) {
  return name == "hidden" || name == "input_ids" || name == "position_ids" ||
         (name.rfind("rope.", 0) == 0 && !name.ends_with(".table"));
}

/// The rotary tables of every position the cache holds stay on the device
/// and each step gathers its positions' rows, when the rotary op can read
/// them (head_dim a multiple of 128); otherwise the host sends the step's.
void gatherRotary(StepShape &shape, const LlmConfig &config,
                  int64_t capacity) {
  if (config.headDim % 128 != 0)
    return;
  shape.rotary = Rotary::Ids;
  shape.rotaryRows = capacity;
}

constexpr const char *kEmbeddingTable = "model.embed_tokens.weight";
constexpr int64_t kIdBytes = 4; ///< an i32 token id

NpyArray i32Array(std::vector<int64_t> shape,
                  const std::vector<std::vector<int64_t>> &tokens) {
  NpyArray a;
  a.dtype = NpyDtype::I32;
  a.shape = std::move(shape);
  for (const std::vector<int64_t> &seq : tokens)
    for (int64_t t : seq) {
      const auto v = static_cast<int32_t>(t);
      a.data.append(reinterpret_cast<const char *>(&v), sizeof v);
    }
  return a;
}

NpyArray f32Array(std::vector<int64_t> shape,
                  const std::vector<double> &values) {
  NpyArray a;
  a.dtype = NpyDtype::F32;
  a.shape = std::move(shape);
  a.data.resize(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(values[i]);
    std::memcpy(a.data.data() + 4 * i, &f, 4);
  }
  return a;
}

double dl16(double x) {
  return dlf16::toFloat(dlf16::fromFloat(static_cast<float>(x)));
}

/// The step's hidden input: the embedding rows of its tokens.
std::vector<double>
embeddingRows(const std::vector<double> &table, int64_t hidden,
              const std::vector<std::vector<int64_t>> &tokens) {
  std::vector<double> rows;
  for (const std::vector<int64_t> &seq : tokens)
    for (int64_t t : seq)
      rows.insert(rows.end(), table.begin() + t * hidden,
                  table.begin() + (t + 1) * hidden);
  return rows;
}

} // namespace

int64_t argmax(const std::vector<double> &values) {
  int64_t best = 0;
  for (size_t i = 1; i < values.size(); ++i)
    if (values[i] > values[static_cast<size_t>(best)])
      best = static_cast<int64_t>(i);
  return best;
}

LlmDevice::LlmDevice(const LlmConfig &config, const hw::HwConfig &hw,
                     const LlmDeviceOptions &options)
    : config_(config), options_(options),
      layers_(options.layers > 0 ? options.layers : config.numLayers),
      capacity_((options.capacity + kCachePageTokens - 1) / kCachePageTokens *
                kCachePageTokens),
      device_(hw, options.numerics) {
  SPYRE_ASSERT(options.slots >= 1 && options.capacity >= 1,
               "a device needs a slot and a capacity");
  // The weights are the inputs of any step that are neither the step's own
  // (hidden states, rotary tables) nor the cache.
  StepShape shape;
  shape.layers = layers_;
  shape.embedding = true;
  shape.lmHead = true;
  shape.tokenIds = true;
  shape.greedy = !options.hostSampling;
  shape.residentCache = true;
  shape.positions = {0};
  gatherRotary(shape, config_, capacity_);
  const std::unique_ptr<compiler::Graph> graph = buildLlmGraph(config_, shape);
  run::ModelInputs drawn;
  std::optional<Checkpoint> checkpoint;
  if (!options.weights.empty()) {
    checkpoint.emplace(options.weights);
    checkWeights(*checkpoint, *graph, config_);
  }
  if (options.numerics) {
    drawn = llmInputs(*graph, config_, shape, options.seed);
    if (checkpoint)
      loadWeights(*checkpoint, *graph, config_, drawn);
  }
  // The weights outside the layers first; then, above the LX addresses
  // (so that a looped step's code tells its layers' addresses from LX
  // ones), one region per layer: its weights in layer 0's order, then its
  // cache pages.
  const auto sticksOf = [](const Value &v) {
    return isa::sticksOf(
        isa::deviceShapeOf(v.type().shape, isa::DType::Dl16));
  };
  const auto layerOf = [&](const std::string &name) -> int64_t {
    for (int64_t l = 0; l < layers_; ++l)
      if (name.rfind("model.layers." + std::to_string(l) + ".", 0) == 0)
        return l;
    return -1;
  };
  const auto keep = [&](const Value &v, uint64_t address) {
    isa::TensorDecl t = run::Device::tensorAt(
        v.name(), isa::DType::Dl16, v.type().shape, address);
    if (options.numerics && v.name().ends_with(".table"))
      // The rotary tables from double precision, as a step's are sent.
      device_.write(t, f32Array(v.type().shape,
                                rotaryRows(config_, v.type().shape[0],
                                           v.name() == "rope.sin.table")));
    else if (options.numerics)
      device_.write(t, drawn.arrays.at(v.name()));
    weightBytes_ += static_cast<uint64_t>(v.type().elementCount() * kHostBytes);
    weights_.emplace(v.name(), std::move(t));
  };
  std::map<std::string, uint64_t> layerOffset; // layer 0's, by name after it
  uint64_t layerWeights = 0;
  for (const Value *v : graph->inputs()) {
    if (isStepInput(v->name()))
      continue;
    if (layerOf(v->name()) < 0) {
      keep(*v, device_.reserve(sticksOf(*v)));
      continue;
    }
    if (layerOf(v->name()) == 0) {
      layerOffset[v->name().substr(std::string("model.layers.0.").size())] =
          layerWeights;
      layerWeights += sticksOf(*v);
    }
  }
  pageSticks_ = static_cast<uint64_t>(config_.numKvHeads * config_.headDim);
  const int64_t perSlot = capacity_ / kCachePageTokens;
  poolPages_ = options.paged && options.pages > 0 ? options.pages
                                                  : options.slots * perSlot;
  constexpr uint64_t kAlign = 64;
  cacheOffset_ = (layerWeights + kAlign - 1) / kAlign * kAlign;
  layerStride_ = (cacheOffset_ +
                  static_cast<uint64_t>(2 * poolPages_) * pageSticks_ + kAlign -
                  1) /
                 kAlign * kAlign;
  const auto lx = static_cast<uint64_t>(hw.lxSticks());
  if (device_.firstFree() < lx)
    device_.reserve(lx - device_.firstFree());
  layersStart_ = device_.reserve(
      static_cast<uint64_t>(layers_) * layerStride_, kAlign);
  for (const Value *v : graph->inputs()) {
    const int64_t l = layerOf(v->name());
    if (l < 0 || isStepInput(v->name()))
      continue;
    const std::string rest = v->name().substr(
        ("model.layers." + std::to_string(l) + ".").size());
    SPYRE_ASSERT(layerOffset.count(rest),
                 "layer " + std::to_string(l) + "'s weight '" + v->name() +
                     "' has no layer 0 counterpart");
    keep(*v, layersStart_ + static_cast<uint64_t>(l) * layerStride_ +
                 layerOffset.at(rest));
  }
  weightLoadCycles_ = device_.transferCycles(weightBytes_);

  const int64_t D = config_.hiddenSize, V = config_.vocabSize;
  if (options.numerics) {
    embedding_.resize(static_cast<size_t>(V * D));
    if (config_.tieWordEmbeddings) {
      // The LM head's [hidden, vocab] as the device stores it.
      const std::vector<double> stored = sim::readTensorValues(
          weights_.at("model.embed_tokens.weight.T"), device_.memory());
      for (int64_t t = 0; t < V; ++t)
        for (int64_t d = 0; d < D; ++d)
          embedding_[static_cast<size_t>(t * D + d)] =
              stored[static_cast<size_t>(d * V + t)];
    } else {
      const std::vector<double> table =
          compiler::ref::tensorFromNpy(drawn.arrays.at(kEmbeddingTable))
              .values;
      for (size_t i = 0; i < table.size(); ++i)
        embedding_[i] = dl16(table[i]);
    }
    // The device looks tokens up in this table: with tied embeddings a
    // copy of the LM head's weight, [vocab, hidden] where the head's is
    // [hidden, vocab], so that a token's row is one stick per block.
    device_.write(weights_.at(kEmbeddingTable), f32Array({V, D}, embedding_));
  }

  positions_.assign(static_cast<size_t>(options.slots), 0);
  blocks_.resize(static_cast<size_t>(options.slots));
  pageHeld_.assign(static_cast<size_t>(poolPages_), false);
  if (!options.paged)
    for (int64_t s = 0; s < options.slots; ++s)
      for (int64_t j = 0; j < perSlot; ++j) {
        blocks_[static_cast<size_t>(s)].push_back(s * perSlot + j);
        pageHeld_[static_cast<size_t>(s * perSlot + j)] = true;
      }
}

uint64_t LlmDevice::pageAddress(int64_t layer, int64_t page, bool value) const {
  const auto index =
      static_cast<uint64_t>((value ? poolPages_ : 0) + page);
  return layersStart_ + static_cast<uint64_t>(layer) * layerStride_ +
         cacheOffset_ + index * pageSticks_;
}

const std::vector<int64_t> &LlmDevice::blockTable(int64_t slot) const {
  checkSlot(slot);
  return blocks_[static_cast<size_t>(slot)];
}

int64_t LlmDevice::freePages() const {
  return static_cast<int64_t>(
      std::count(pageHeld_.begin(), pageHeld_.end(), false));
}

isa::TensorDecl LlmDevice::pageTensor(int64_t layer, int64_t page,
                                      bool value) const {
  SPYRE_ASSERT(layer >= 0 && layer < layers_ && page >= 0 && page < poolPages_,
               "page out of range");
  return run::Device::tensorAt(
      "model.layers." + std::to_string(layer) +
          (value ? ".value_page." : ".key_page.") + std::to_string(page),
      isa::DType::Dl16, {config_.numKvHeads, config_.headDim, kCachePageTokens},
      pageAddress(layer, page, value));
}

isa::TensorDecl LlmDevice::cacheTensor(int64_t layer, int64_t slot,
                                       bool value) const {
  checkSlot(slot);
  SPYRE_ASSERT(!options_.paged, "a paged cache is no tensor of its own");
  SPYRE_ASSERT(layer >= 0 && layer < layers_, "layer out of range");
  return run::Device::tensorAt(
      cacheTensorName(layer, slot, value ? "values" : "keys"), isa::DType::Dl16,
      {config_.numKvHeads, config_.headDim, capacity_},
      pageAddress(layer, blocks_[static_cast<size_t>(slot)].front(), value));
}

void LlmDevice::holdPages(int64_t slot, int64_t tokens) {
  std::vector<int64_t> &blocks = blocks_[static_cast<size_t>(slot)];
  const auto needed =
      static_cast<size_t>((tokens + kCachePageTokens - 1) / kCachePageTokens);
  while (blocks.size() < needed) {
    SPYRE_ASSERT(options_.paged, "a contiguous slot holds all its pages");
    auto free = std::find(pageHeld_.begin(), pageHeld_.end(), false);
    if (free == pageHeld_.end())
      throw UserError(SourceLoc{"slot " + std::to_string(slot)},
                      "the key/value cache is full: all " +
                          std::to_string(poolPages_) +
                          " pages are held by sequences",
                      ExitCode::Usage);
    *free = true;
    blocks.push_back(free - pageHeld_.begin());
  }
}

std::vector<std::pair<int64_t, int64_t>>
LlmDevice::runsOf(int64_t slot, int64_t first, int64_t pages) const {
  const std::vector<int64_t> &blocks = blocks_[static_cast<size_t>(slot)];
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t j = first; j < first + pages; ++j) {
    const int64_t page = blocks[static_cast<size_t>(j)];
    if (!runs.empty() && runs.back().first + runs.back().second == page)
      ++runs.back().second;
    else
      runs.emplace_back(page, 1);
  }
  return runs;
}

void LlmDevice::checkSlot(int64_t slot) const {
  if (slot < 0 || slot >= options_.slots)
    throw UserError(SourceLoc{"slot"},
                    "must be in [0, " + std::to_string(options_.slots - 1) +
                        "], got " + std::to_string(slot),
                    ExitCode::Usage);
}

int64_t LlmDevice::position(int64_t slot) const {
  checkSlot(slot);
  return positions_[static_cast<size_t>(slot)];
}

void LlmDevice::assumeCached(int64_t slot, int64_t tokens) {
  checkSlot(slot);
  SPYRE_ASSERT(!device_.numerics(),
               "a cache of no value is for timing-only devices");
  if (tokens < 1 || tokens > capacity_)
    throw UserError(SourceLoc{"--context"},
                    "must be in [1, " + std::to_string(capacity_) + "], got " +
                        std::to_string(tokens),
                    ExitCode::Usage);
  holdPages(slot, tokens);
  positions_[static_cast<size_t>(slot)] = tokens;
}

void LlmDevice::release(int64_t slot) {
  checkSlot(slot);
  const int64_t used =
      (positions_[static_cast<size_t>(slot)] + kCachePageTokens - 1) /
      kCachePageTokens;
  std::vector<int64_t> &blocks = blocks_[static_cast<size_t>(slot)];
  if (device_.numerics()) {
    const std::vector<uint8_t> zeros(pageSticks_ * isa::kStickBytes, 0);
    for (int64_t j = 0; j < used; ++j)
      for (int64_t l = 0; l < layers_; ++l)
        for (bool value : {false, true})
          device_.memory().write(
              pageAddress(l, blocks[static_cast<size_t>(j)], value) *
                  isa::kStickBytes,
              zeros.data(), zeros.size());
  }
  if (options_.paged) {
    for (int64_t page : blocks)
      pageHeld_[static_cast<size_t>(page)] = false;
    blocks.clear();
  }
  positions_[static_cast<size_t>(slot)] = 0;
}

DeviceStep
LlmDevice::prefill(const std::vector<int64_t> &slots,
                   const std::vector<std::vector<int64_t>> &prompts) {
  SPYRE_ASSERT(!slots.empty() && slots.size() == prompts.size(),
               "one prompt per slot");
  StepShape shape;
  shape.mode = Mode::Prefill;
  shape.batch = static_cast<int64_t>(slots.size());
  shape.tokens = static_cast<int64_t>(prompts.front().size());
  for (size_t b = 0; b < slots.size(); ++b) {
    if (static_cast<int64_t>(prompts[b].size()) != shape.tokens)
      throw UserError(SourceLoc{"prefill"},
                      "the prompts of one prefill must have one length",
                      ExitCode::Usage);
    shape.positions.push_back(position(slots[b]));
  }
  return step(shape, slots, prompts);
}

DeviceStep LlmDevice::decode(const std::vector<int64_t> &slots,
                             const std::vector<int64_t> &tokens) {
  SPYRE_ASSERT(!slots.empty() && slots.size() == tokens.size(),
               "one token per slot");
  StepShape shape;
  shape.mode = Mode::Decode;
  shape.batch = static_cast<int64_t>(slots.size());
  shape.tokens = 1;
  std::vector<std::vector<int64_t>> rows;
  for (size_t b = 0; b < slots.size(); ++b) {
    const int64_t p = position(slots[b]);
    if (p == 0)
      throw UserError(SourceLoc{"decode"},
                      "slot " + std::to_string(slots[b]) +
                          " holds no sequence: a decode step follows a prefill",
                      ExitCode::Usage);
    shape.positions.push_back(p);
    shape.context = std::max(shape.context, p);
    rows.push_back({tokens[b]});
  }
  return step(shape, slots, rows);
}

DeviceStep LlmDevice::step(const StepShape &stepShape,
                           const std::vector<int64_t> &slots,
                           const std::vector<std::vector<int64_t>> &tokens) {
  StepShape shape = stepShape;
  shape.layers = layers_;
  shape.embedding = true;
  shape.lmHead = true;
  shape.tokenIds = true;
  shape.greedy = !options_.hostSampling;
  shape.residentCache = true;
  gatherRotary(shape, config_, capacity_);
  for (size_t b = 0; b < slots.size(); ++b) {
    if (positions_[static_cast<size_t>(slots[b])] + shape.tokens > capacity_)
      throw UserError(
          SourceLoc{"slot " + std::to_string(slots[b])},
          "the cache holds " + std::to_string(capacity_) +
              " tokens; this step would need " +
              std::to_string(positions_[static_cast<size_t>(slots[b])] +
                             shape.tokens),
          ExitCode::Usage);
    for (int64_t t : tokens[b])
      if (t < 0 || t >= config_.vocabSize)
        throw UserError(SourceLoc{"token"},
                        "must be in [0, " +
                            std::to_string(config_.vocabSize - 1) + "], got " +
                            std::to_string(t),
                        ExitCode::Usage);
  }
  for (size_t b = 1; b < slots.size(); ++b)
    if (std::find(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(b),
                  slots[b]) != slots.begin() + static_cast<std::ptrdiff_t>(b))
      throw UserError(SourceLoc{"slot " + std::to_string(slots[b])},
                      "appears twice in one step", ExitCode::Usage);
  // Paged: all the new pages the step needs, or none of them, so that a
  // refused step leaves every sequence as it was.
  int64_t newPages = 0;
  for (int64_t slot : slots) {
    const int64_t pos = positions_[static_cast<size_t>(slot)];
    newPages += std::max<int64_t>(
        0, (pos + shape.tokens + kCachePageTokens - 1) / kCachePageTokens -
               static_cast<int64_t>(blocks_[static_cast<size_t>(slot)].size()));
  }
  if (newPages > freePages())
    throw UserError(SourceLoc{"slot " + std::to_string(slots.front())},
                    "the key/value cache is full: the step needs " +
                        std::to_string(newPages) + " new pages, " +
                        std::to_string(freePages()) + " of " +
                        std::to_string(poolPages_) + " are free",
                    ExitCode::Usage);
  // The pages the step writes, and its sequences' runs of pages: the full
  // pages before the current one, which it reads, and in prefill the
  // pages from the current one on, which its tokens fill.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pastRuns, writeRuns;
  auto lengthsOf = [](const std::vector<std::pair<int64_t, int64_t>> &runs) {
    std::vector<int64_t> lengths;
    for (const auto &run : runs)
      lengths.push_back(run.second);
    return lengths;
  };
  for (size_t b = 0; b < slots.size(); ++b) {
    const int64_t slot = slots[b], pos = positions_[static_cast<size_t>(slot)];
    holdPages(slot, pos + shape.tokens);
    // A prefill writes a partly filled current page as key_page.T (over
    // its tail), and the pages after it run by run.
    const PrefillPages pages = prefillPages(pos, shape.tokens);
    pastRuns.push_back(runsOf(slot, 0, pages.cached));
    writeRuns.push_back(
        shape.mode == Mode::Prefill
            ? runsOf(slot, pages.firstWritten, pages.written)
            : std::vector<std::pair<int64_t, int64_t>>{});
    if (shape.mode == Mode::Prefill) {
      shape.pageRuns.push_back(lengthsOf(writeRuns.back()));
      shape.cachedRuns.push_back(lengthsOf(pastRuns.back()));
    } else {
      shape.pageRuns.push_back(lengthsOf(pastRuns.back()));
    }
  }
  const std::unique_ptr<compiler::Graph> graph = buildLlmGraph(config_, shape);

  // Where the resident tensors are: the weights, and each sequence's pages
  // (its runs of full pages, its current page and what replaces it in
  // place; in prefill, the runs its tokens fill).
  compiler::CompileOptions co;
  co.optLevel = options_.optLevel;
  co.placement.firstFree = device_.firstFree();
  for (const auto &[name, t] : weights_)
    co.placement.addresses[name] = t.address;
  for (int64_t l = 0; l < layers_; ++l)
    for (size_t b = 0; b < slots.size(); ++b) {
      const int64_t slot = slots[b];
      const auto seq = static_cast<int64_t>(b);
      const std::vector<int64_t> &blocks = blocks_[static_cast<size_t>(slot)];
      const int64_t current = blocks[static_cast<size_t>(
          positions_[static_cast<size_t>(slot)] / kCachePageTokens)];
      for (bool value : {false, true}) {
        const std::string kind = value ? "value" : "key";
        for (size_t r = 0; r < writeRuns[b].size(); ++r)
          co.placement.addresses[cacheTensorName(
              l, seq, kind + ".T." + std::to_string(r))] =
              pageAddress(l, writeRuns[b][r].first, value);
        for (size_t r = 0; r < pastRuns[b].size(); ++r)
          co.placement.addresses[cacheTensorName(
              l, seq, "past_" + kind + ".T." + std::to_string(r))] =
              pageAddress(l, pastRuns[b][r].first, value);
        for (const char *part : {"_tail.T", "_page.T"})
          co.placement.addresses[cacheTensorName(l, seq, kind + part)] =
              pageAddress(l, current, value);
      }
    }
  isa::Program program;
  if (layers_ > 1 && !options_.unrolled) {
    // One layer's code in a loop over the layers' regions.
    ResidentLayout layout;
    layout.placement = co.placement;
    layout.start = layersStart_;
    layout.stride = layerStride_;
    program = compileLoopedModel(config_, shape, device_.config(),
                                 options_.optLevel, &layout)
                  .program;
  } else {
    DiagnosticEngine diags;
    compiler::CompileOutcome outcome =
        compiler::compile(*graph, device_.config(), co, diags);
    if (!outcome.result)
      throw run::CompileError(diags, outcome.status ==
                                         compiler::CompileStatus::InternalError);
    program = std::move(outcome.result->program);
  }

  DeviceStep out;
  out.shape = shape;
  out.programBytes = isa::writeProgram(program).size();
  // The step's own inputs, sent by the host: its token ids, and its
  // positions (or the rotary tables of its positions).
  for (const Value *v : graph->inputs()) {
    if (!isStepInput(v->name()))
      continue;
    const bool ids = v->name() == "input_ids" || v->name() == "position_ids";
    out.inputBytes += static_cast<uint64_t>(v->type().elementCount() *
                                            (ids ? kIdBytes : kHostBytes));
    if (!device_.numerics())
      continue;
    const isa::TensorDecl *t =
        run::findTensor(program, v->name(), isa::TensorKind::Input);
    if (!t)
      continue;
    if (v->name() == "position_ids") {
      device_.write(*t, i32Array(v->type().shape, {positionIds(shape)}));
      continue;
    }
    if (ids) {
      device_.write(*t, i32Array(v->type().shape, tokens));
      continue;
    }
    device_.write(*t, f32Array(v->type().shape,
                               rotaryTable(v->type(), config_, shape,
                                           v->name().rfind("rope.sin", 0) == 0)));
  }
  out.inputCycles = device_.transfer(out.inputBytes);
  out.launchCycles = device_.launch();
  out.run = device_.run(program);
  out.programCycles = out.run.cycles;

  // What comes back: one id per sequence from the device's arg-max, or
  // the logits for the host to sample from.
  const Value *logits = graph->outputs().front();
  const Value *next = shape.greedy ? graph->outputs().back() : nullptr;
  out.greedyOnDevice = next != nullptr;
  out.outputBytes = static_cast<uint64_t>(
      next ? next->type().elementCount() * kIdBytes
           : logits->type().elementCount() * kHostBytes);
  out.outputCycles = device_.transfer(out.outputBytes);
  if (device_.numerics()) {
    const isa::TensorDecl *t =
        run::findTensor(program, logits->name(), isa::TensorKind::Output);
    SPYRE_ASSERT(t, "the step's program has no logits");
    const std::vector<double> all = sim::readTensorValues(*t, device_.memory());
    const auto V = static_cast<size_t>(config_.vocabSize);
    for (size_t b = 0; b < slots.size(); ++b)
      out.logits.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(b * V),
                              all.begin() +
                                  static_cast<std::ptrdiff_t>((b + 1) * V));
    if (next) {
      const isa::TensorDecl *n =
          run::findTensor(program, next->name(), isa::TensorKind::Output);
      SPYRE_ASSERT(n, "the step's program has no next tokens");
      const NpyArray ids = sim::readTensor(*n, device_.memory());
      for (size_t b = 0; b < slots.size(); ++b) {
        int32_t id = 0;
        std::memcpy(&id, ids.data.data() + b * sizeof id, sizeof id);
        out.tokens.push_back(id);
      }
    } else {
      for (const std::vector<double> &l : out.logits)
        out.tokens.push_back(argmax(l));
    }
  } else {
    out.tokens.assign(slots.size(), 0);
  }
  for (int64_t slot : slots)
    positions_[static_cast<size_t>(slot)] += shape.tokens;
  return out;
}

compiler::ref::TensorMap LlmDevice::storedWeights() const {
  compiler::ref::TensorMap out;
  for (const auto &[name, t] : weights_)
    out[name] = {t.hostShape, sim::readTensorValues(t, device_.memory())};
  return out;
}

ReferenceGeneration referenceGenerate(const LlmConfig &config, int64_t layers,
                                      const compiler::ref::TensorMap &weights,
                                      const std::vector<double> &embedding,
                                      const std::vector<int64_t> &prompt,
                                      int64_t steps) {
  ReferenceGeneration out;
  std::vector<int64_t> tokens = prompt;
  for (int64_t i = 0; i <= steps; ++i) {
    StepShape shape;
    shape.mode = Mode::Prefill;
    shape.tokens = static_cast<int64_t>(tokens.size());
    shape.layers = layers;
    shape.embedding = true;
    shape.lmHead = true;
    const std::unique_ptr<compiler::Graph> graph = buildLlmGraph(config, shape);
    compiler::ref::TensorMap inputs;
    for (const Value *v : graph->inputs()) {
      const std::string &name = v->name();
      if (name == "hidden")
        inputs[name] = {v->type().shape,
                        embeddingRows(embedding, config.hiddenSize, {tokens})};
      else if (name.rfind("rope.", 0) == 0)
        inputs[name] = {v->type().shape,
                        rotaryTable(v->type(), config, shape,
                                    name.rfind("rope.sin", 0) == 0)};
      else
        inputs[name] = weights.at(name);
    }
    std::vector<double> logits =
        compiler::ref::evaluateGraph(*graph, inputs).front().values;
    tokens.push_back(argmax(logits));
    out.tokens.push_back(tokens.back());
    out.logits.push_back(std::move(logits));
  }
  return out;
}

} // namespace spyre::llm
