// Real weights (llm/LlmWeights.h): the tiny Granite and Llama configs' seeded
// weights written as a checkpoint (a safetensors file in F32 or BF16, a
// sharded folder, a folder of .npy files), read back with `weights`, give
// the tokens and logits of the same weights drawn from the seed, bit for
// bit, and the double-precision reference agrees; a checkpoint that does
// not fit the config is an error naming the tensor.
#include "llm/LlmWeights.h"

#include "compiler/ref/Evaluator.h"
#include "llm/LlmGenerate.h"
#include "llm/LlmGraph.h"
#include "llm/LlmRun.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/Npy.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>

namespace spyre::llm {
namespace {

std::string configPath(const std::string &file) {
  return test::srcPath("examples/llm/" + file);
}

/// The weights of the persistent device's graph, as llmInputs draws them
/// from `seed`, by checkpoint name and in the checkpoint's layout ([out, in]
/// for a matrix the graph holds transposed). Tied embeddings: the table is
/// the LM head's, as the device makes it.
std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>>
seededWeights(const LlmConfig &config, uint64_t seed) {
  StepShape shape;
  shape.layers = config.numLayers;
  shape.embedding = true;
  shape.lmHead = true;
  shape.tokenIds = true;
  shape.greedy = true;
  shape.residentCache = true;
  shape.positions = {0};
  const auto graph = buildLlmGraph(config, shape);
  const run::ModelInputs drawn = llmInputs(*graph, config, shape, seed);
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>>
      out;
  for (const compiler::Value *v : graph->inputs()) {
    const std::optional<WeightName> w = checkpointNameOf(v->name());
    if (!w)
      continue;
    const std::vector<double> values =
        compiler::ref::tensorFromNpy(drawn.arrays.at(v->name())).values;
    std::vector<int64_t> dims = v->type().shape;
    if (!w.value().transposed) {
      out.emplace(w->name, std::make_pair(dims, values)); // kept if tied
      continue;
    }
    const int64_t in = dims[0], outDim = dims[1];
    std::vector<double> stored(values.size());
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < outDim; ++o)
        stored[static_cast<size_t>(o * in + i)] =
            values[static_cast<size_t>(i * outDim + o)];
    out[w->name] = {{outDim, in}, stored};
  }
  return out;
}

std::string bytesOf(const std::vector<double> &values, SafetensorsDtype dtype) {
  std::string out;
  for (double x : values) {
    const auto f = static_cast<float>(x);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    if (dtype == SafetensorsDtype::F32) {
      out.append(reinterpret_cast<const char *>(&bits), 4);
      continue;
    }
    SPYRE_ASSERT(dtype == SafetensorsDtype::BF16, "test writes F32 or BF16");
    // Round to nearest, ties to even, as torch does.
    const uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
    const auto b = static_cast<uint16_t>(rounded >> 16);
    out.append(reinterpret_cast<const char *>(&b), 2);
  }
  return out;
}

/// Each tensor's values rounded to bfloat16 (what a BF16 file holds).
void roundToBf16(
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>>
        &weights) {
  for (auto &[name, w] : weights) {
    const std::string bytes = bytesOf(w.second, SafetensorsDtype::BF16);
    for (size_t i = 0; i < w.second.size(); ++i) {
      const uint32_t bits =
          static_cast<uint32_t>(
              static_cast<unsigned char>(bytes[2 * i]) |
              (static_cast<unsigned char>(bytes[2 * i + 1]) << 8))
          << 16;
      float f = 0;
      std::memcpy(&f, &bits, 4);
      w.second[i] = f;
    }
  }
}

using Weights =
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<double>>>;

std::vector<SafetensorsEntry> entriesOf(const Weights &weights,
                                        SafetensorsDtype dtype) {
  std::vector<SafetensorsEntry> entries;
  for (const auto &[name, w] : weights)
    entries.push_back({name, dtype, w.first, bytesOf(w.second, dtype)});
  return entries;
}

std::string writeFile(const Weights &weights, SafetensorsDtype dtype) {
  const std::string path = test::makeTempDir() + "/model.safetensors";
  writeFileAtomic(path, serializeSafetensors(entriesOf(weights, dtype)));
  return path;
}

/// A folder of two shards and their index, as transformers writes one.
std::string writeSharded(const Weights &weights, SafetensorsDtype dtype) {
  const std::string dir = test::makeTempDir();
  std::vector<SafetensorsEntry> shards[2];
  std::string map;
  size_t i = 0;
  for (SafetensorsEntry &e : entriesOf(weights, dtype)) {
    const int shard = i++ % 2;
    map += std::string(map.empty() ? "" : ", ") + "\"" + e.name +
           "\": \"model-0000" + std::to_string(shard + 1) +
           "-of-00002.safetensors\"";
    shards[shard].push_back(std::move(e));
  }
  for (int s = 0; s < 2; ++s)
    writeFileAtomic(dir + "/model-0000" + std::to_string(s + 1) +
                        "-of-00002.safetensors",
                    serializeSafetensors(shards[s]));
  writeFileAtomic(dir + "/model.safetensors.index.json",
                  "{\"metadata\": {\"total_size\": 0}, \"weight_map\": {" +
                      map + "}}");
  return dir;
}

std::string writeNpyFolder(const Weights &weights) {
  const std::string dir = test::makeTempDir();
  for (const auto &[name, w] : weights) {
    std::vector<float> values(w.second.begin(), w.second.end());
    writeNpy(dir + "/" + name + ".npy", makeNpyF32(values, w.first));
  }
  return dir;
}

GenerateReport generate(const std::string &config, const std::string &weights,
                        int64_t steps = 5) {
  GenerateOptions o;
  o.modelConfig = configPath(config);
  o.weights = weights;
  o.check = true;
  o.steps = steps;
  return runGeneration(o);
}

void expectSameGeneration(const GenerateReport &a, const GenerateReport &b) {
  ASSERT_EQ(a.steps.size(), b.steps.size());
  EXPECT_EQ(a.tokens, b.tokens);
  for (size_t i = 0; i < a.steps.size(); ++i)
    EXPECT_EQ(a.steps[i].logits, b.steps[i].logits) << "step " << i;
}

void expectChecked(const GenerateReport &r) {
  EXPECT_EQ(r.findings(), 0u);
  EXPECT_FALSE(r.checkFailed());
  for (const SequenceCheck &c : r.checks) {
    EXPECT_TRUE(c.tokensEqual);
    EXPECT_EQ(c.logitsOutside, 0u);
  }
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "(no error)";
}

TEST(LlmWeights, NamesMapToTheCheckpointsTensors) {
  EXPECT_EQ(checkpointNameOf("model.layers.3.self_attn.q_proj.weight.T")->name,
            "model.layers.3.self_attn.q_proj.weight");
  EXPECT_TRUE(checkpointNameOf("lm_head.weight.T")->transposed);
  EXPECT_FALSE(checkpointNameOf("model.norm.weight")->transposed);
  EXPECT_FALSE(checkpointNameOf("rope.cos_q").has_value());
  EXPECT_FALSE(checkpointNameOf("hidden").has_value());
  EXPECT_FALSE(checkpointNameOf("input_ids").has_value());
}

TEST(LlmWeights, F32FileGeneratesAsTheSeededWeights) {
  // Tiny Granite ties its embeddings: the file has no lm_head.weight.
  const LlmConfig config = loadLlmConfig(configPath("tiny-granite.json"));
  const Weights weights = seededWeights(config, 1);
  EXPECT_EQ(weights.count("lm_head.weight"), 0u);
  const GenerateReport seeded = generate("tiny-granite.json", "");
  const GenerateReport read =
      generate("tiny-granite.json", writeFile(weights, SafetensorsDtype::F32));
  expectChecked(seeded);
  expectChecked(read);
  expectSameGeneration(seeded, read);
}

TEST(LlmWeights, UntiedShardedFolderGeneratesAsTheSeededWeights) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-llama.json"));
  ASSERT_FALSE(config.tieWordEmbeddings);
  const Weights weights = seededWeights(config, 1);
  EXPECT_EQ(weights.count("lm_head.weight"), 1u);
  const GenerateReport seeded = generate("tiny-llama.json", "", 3);
  const GenerateReport read = generate(
      "tiny-llama.json", writeSharded(weights, SafetensorsDtype::F32), 3);
  expectChecked(read);
  expectSameGeneration(seeded, read);
}

TEST(LlmWeights, Bf16FileGeneratesAsItsValuesInEveryForm) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-granite.json"));
  Weights weights = seededWeights(config, 1);
  const std::string bf16 = writeFile(weights, SafetensorsDtype::BF16);
  roundToBf16(weights);
  const GenerateReport fromBf16 = generate("tiny-granite.json", bf16, 3);
  expectChecked(fromBf16);
  // The same values given as F32, in shards and as .npy files.
  expectSameGeneration(
      fromBf16, generate("tiny-granite.json",
                         writeSharded(weights, SafetensorsDtype::F32), 3));
  expectSameGeneration(
      fromBf16, generate("tiny-granite.json", writeNpyFolder(weights), 3));
}

TEST(LlmWeights, StepRunChecksWithTheCheckpoint) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-llama.json"));
  LlmRunOptions o;
  o.modelConfig = configPath("tiny-llama.json");
  o.shape.mode = Mode::Decode;
  o.shape.context = 70;
  o.shape.lmHead = true;
  o.check = true;
  o.useSystemC = false;
  o.weights = writeFile(seededWeights(config, 1), SafetensorsDtype::BF16);
  const LlmReport r = runLlm(o);
  EXPECT_TRUE(r.run.checked);
  EXPECT_EQ(r.run.exitCode(), 0);
  EXPECT_NE(r.weights.find("(safetensors file, "), std::string::npos)
      << r.weights;
}

TEST(LlmWeights, MissingTensorIsNamedWithItsShape) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-llama.json"));
  Weights weights = seededWeights(config, 1);
  weights.erase("lm_head.weight");
  const std::string path = writeFile(weights, SafetensorsDtype::F32);
  EXPECT_EQ(errorOf([&] { generate("tiny-llama.json", path); }),
            path +
                ": error: tensor 'lm_head.weight' [320, 256] is not in the "
                "checkpoint (safetensors file, " +
                std::to_string(weights.size()) +
                " tensors); the config's tie_word_embeddings is false, so "
                "the LM head is a tensor of its own");
  weights.erase("model.norm.weight");
  weights.erase("model.layers.0.mlp.up_proj.weight");
  const std::string fewer = writeFile(weights, SafetensorsDtype::F32);
  // The first in the graph's order is named, the others counted.
  EXPECT_EQ(errorOf([&] { generate("tiny-llama.json", fewer); }),
            fewer +
                ": error: tensor 'model.layers.0.mlp.up_proj.weight' "
                "[384, 256] is not in the checkpoint (safetensors file, " +
                std::to_string(weights.size()) +
                " tensors); 2 more of the model's weights are missing too");
}

TEST(LlmWeights, ShapeMismatchNamesExpectedAndFound) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-granite.json"));
  Weights weights = seededWeights(config, 1);
  auto &q = weights.at("model.layers.1.self_attn.q_proj.weight");
  // Held as the graph holds it, [in, out], instead of PyTorch's [out, in].
  std::swap(q.first[0], q.first[1]);
  q.first = {q.first[0] / 2, q.first[1] * 2};
  const std::string path = writeFile(weights, SafetensorsDtype::F32);
  EXPECT_EQ(errorOf([&] { generate("tiny-granite.json", path); }),
            path +
                ": error: tensor 'model.layers.1.self_attn.q_proj.weight': "
                "the config (" +
                configPath("tiny-granite.json") +
                ") implies [512, 256], the checkpoint holds [128, 1024]");
}

TEST(LlmWeights, TimingOnlyReadsNoData) {
  // Every value NaN: read, it would be refused.
  const LlmConfig config = loadLlmConfig(configPath("tiny-granite.json"));
  Weights weights = seededWeights(config, 1);
  for (auto &[name, w] : weights)
    std::fill(w.second.begin(), w.second.end(), std::nan(""));
  const std::string path = writeFile(weights, SafetensorsDtype::F32);
  GenerateOptions o;
  o.modelConfig = configPath("tiny-granite.json");
  o.weights = path;
  o.steps = 1;
  o.timingOnly = true;
  EXPECT_EQ(runGeneration(o).exitCode(), 0);
  o.timingOnly = false;
  const std::string error = errorOf([&] { runGeneration(o); });
  EXPECT_EQ(error.find(path + ": error: tensor '"), 0u) << error;
  EXPECT_NE(error.find("is not a finite float16, the graph's element type"),
            std::string::npos)
      << error;
}

TEST(LlmWeights, FolderWithoutACheckpointIsNamed) {
  const std::string dir = test::makeTempDir();
  writeFileAtomic(dir + "/notes.txt", "no weights here");
  EXPECT_EQ(errorOf([&] { Checkpoint c(dir); }),
            dir + ": error: a checkpoint folder holds "
                  "model.safetensors.index.json and its shards, "
                  "model.safetensors, or NAME.npy files; this one holds none");
}

TEST(LlmWeights, ShardMissingItsTensorOrNamedOutsideTheFolder) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-granite.json"));
  const std::string dir =
      writeSharded(seededWeights(config, 1), SafetensorsDtype::F32);
  const std::string index = dir + "/model.safetensors.index.json";
  const std::string good = readFile(index, kTextFileLimit);
  // The first tensor moved to the shard that does not hold it.
  std::string moved = good;
  moved.replace(moved.find("model-00001"), 11, "model-00002");
  writeFileAtomic(index, moved);
  EXPECT_EQ(
      errorOf([&] { Checkpoint c(dir); }).find(index + ": error: tensor '"),
      0u);
  EXPECT_NE(errorOf([&] { Checkpoint c(dir); })
                .find("' is mapped to shard 'model-00002-of-00002."
                      "safetensors', which does not hold it"),
            std::string::npos);
  std::string escaping = good;
  escaping.replace(escaping.find("model-00001"), 11, "../model-00001");
  writeFileAtomic(index, escaping);
  EXPECT_NE(errorOf([&] { Checkpoint c(dir); })
                .find("shard '../model-00001-of-00002.safetensors' holds a "
                      "path separator"),
            std::string::npos);
}

/// The line of `text` that starts with `key`.
std::string lineOf(const std::string &text, const std::string &key) {
  const size_t at = text.find("\n" + key);
  if (at == std::string::npos)
    return "(no " + key + " line)";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(LlmWeights, CommandGeneratesWithTheCheckpoint) {
  const LlmConfig config = loadLlmConfig(configPath("tiny-granite.json"));
  const std::string path =
      writeFile(seededWeights(config, 1), SafetensorsDtype::F32);
  const test::ToolResult seeded = test::runSpyre(
      {"llm", "examples/llm/tiny-granite.json", "--generate", "2", "--check"});
  const test::ToolResult read =
      test::runSpyre({"llm", "examples/llm/tiny-granite.json", "--generate",
                      "2", "--check", "--weights", path});
  ASSERT_EQ(read.exitCode, 0) << read.out << read.err;
  EXPECT_EQ(lineOf(read.out, "weights"), "weights    " + path);
  EXPECT_EQ(lineOf(read.out, "tokens"), lineOf(seeded.out, "tokens"));
  EXPECT_EQ(lineOf(read.out, "check"), lineOf(seeded.out, "check"));
  EXPECT_EQ(lineOf(read.out, "check").find("check      ok"), 0u) << read.out;
}

TEST(LlmWeights, CommandNamesABadCheckpoint) {
  const std::string path = test::makeTempDir() + "/w.safetensors";
  writeFileAtomic(path, std::string("\x02\x00\x00\x00\x00\x00\x00\x00{", 9));
  const test::ToolResult r = test::runSpyre(
      {"llm", "examples/llm/tiny-granite.json", "--mode", "decode", "--context",
       "10", "--timing-only", "--weights", path});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, path + ": error: invalid safetensors file: truncated: the "
                          "header length is 2 bytes but only 1 follow it\n");
  const test::ToolResult ladder = test::runSpyre(
      {"llm", "examples/llm/tiny-granite.json", "--mode", "decode", "--context",
       "10", "--ladder", "--weights", path});
  EXPECT_EQ(ladder.exitCode, 2);
  EXPECT_EQ(
      ladder.err,
      "--weights: error: the ladder is timing only and reads no weights\n");
}

} // namespace
} // namespace spyre::llm
