// config.json parsing: the shipped configs read as their files say, Hugging
// Face's defaults for the optional keys, and the errors a GoogleTest states
// more precisely than the bad-input catalogue (tests/bad-inputs/llm-*).
#include "llm/LlmConfig.h"
#include "support/Diagnostic.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

namespace spyre::llm {
namespace {

std::string errorOf(const std::string &text) {
  try {
    parseLlmConfig(text, "c.json");
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "no error";
}

TEST(LlmConfig, ReadsGranite338b) {
  const LlmConfig c =
      loadLlmConfig(test::srcPath("examples/llm/granite-3.3-8b.json"));
  EXPECT_EQ(c.architecture, Architecture::Granite);
  EXPECT_EQ(c.hiddenSize, 4096);
  EXPECT_EQ(c.intermediateSize, 12800);
  EXPECT_EQ(c.numHeads, 32);
  EXPECT_EQ(c.numKvHeads, 8);
  EXPECT_EQ(c.headDim, 128);
  EXPECT_EQ(c.groupSize(), 4);
  EXPECT_EQ(c.numLayers, 40);
  EXPECT_EQ(c.vocabSize, 49159);
  EXPECT_EQ(c.rmsNormEps, 1e-5);
  EXPECT_EQ(c.ropeTheta, 1e7);
  EXPECT_TRUE(c.tieWordEmbeddings);
  EXPECT_EQ(c.embeddingMultiplier, 12.0);
  EXPECT_EQ(c.attentionMultiplier, 0.0078125);
  EXPECT_EQ(c.attentionScale(), 0.0078125);
  EXPECT_EQ(c.residualMultiplier, 0.22);
  EXPECT_EQ(c.logitsScaling, 16.0);
  // 4096 x (4096 + 2 x 1024 + 4096) + 3 x 4096 x 12800 + 2 x 4096.
  EXPECT_EQ(c.layerParameters(), 199237632);
}

TEST(LlmConfig, ReadsTinyGranite) {
  const LlmConfig c =
      loadLlmConfig(test::srcPath("examples/llm/tiny-granite.json"));
  EXPECT_EQ(c.hiddenSize, 256);
  EXPECT_EQ(c.numHeads, 4);
  EXPECT_EQ(c.numKvHeads, 2);
  EXPECT_EQ(c.headDim, 128); // given, not hidden / heads
  EXPECT_EQ(c.numLayers, 2);
  EXPECT_EQ(c.vocabSize, 250);
}

TEST(LlmConfig, LlamaTakesHuggingFaceDefaults) {
  const LlmConfig c = parseLlmConfig(
      R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 512,
          "intermediate_size": 1024, "num_attention_heads": 8,
          "num_hidden_layers": 3, "vocab_size": 1000, "bos_token_id": 1,
          "rope_scaling": null})",
      "c.json");
  EXPECT_EQ(c.architecture, Architecture::Llama);
  EXPECT_EQ(c.numKvHeads, 8); // no num_key_value_heads: multi-head
  EXPECT_EQ(c.headDim, 64);
  EXPECT_EQ(c.rmsNormEps, 1e-6);
  EXPECT_EQ(c.ropeTheta, 10000.0);
  EXPECT_FALSE(c.tieWordEmbeddings);
  EXPECT_EQ(c.attentionScale(), 0.125); // 1 / sqrt(64)
  EXPECT_EQ(c.residualMultiplier, 1.0);
}

/// The text of a Llama config of head dim 128 with `rope` as its
/// "rope_theta" and "rope_scaling" text.
std::string llamaText(const std::string &rope) {
  return R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1024,
          "intermediate_size": 2048, "num_attention_heads": 8,
          "num_hidden_layers": 2, "vocab_size": 100, )" +
         rope + "}";
}

LlmConfig llamaWithRope(const std::string &rope) {
  return parseLlmConfig(llamaText(rope), "c.json");
}

TEST(LlmConfig, RopeScalingLlama3AsLlama31) {
  // Llama-3.1-8B's rope: theta 500000, factor 8, low 1, high 4, 8192
  // original positions. The expected inverse frequencies are Hugging Face's
  // _compute_llama3_parameters, evaluated in NumPy (float64): pair 20 keeps
  // its frequency (wavelength 379 < 2048), 30 and 34 blend (2948 and 6695),
  // 35 and 63 are divided by 8 (8219 and 2.56 M > 8192).
  const LlmConfig c = llamaWithRope(
      R"("rope_theta": 500000.0, "rope_scaling": {"factor": 8.0,
         "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192, "rope_type": "llama3"})");
  EXPECT_EQ(c.ropeScaling.type, RopeScaling::Type::Llama3);
  const std::pair<int64_t, double> want[] = {
      {0, 1.0},
      {20, 0.016560440080994446},
      {30, 0.0013718935677611381},
      {34, 0.00017850781276799638},
      {35, 9.556212353964683e-05},
      {63, 3.068925988914511e-07},
  };
  for (const auto &[i, f] : want)
    EXPECT_NEAR(c.ropeInverseFrequency(i), f, f * 1e-12) << "pair " << i;
}

TEST(LlmConfig, RopeScalingLinearAndDefault) {
  const LlmConfig plain = llamaWithRope(R"("rope_scaling": null)");
  const LlmConfig linear =
      llamaWithRope(R"("rope_scaling": {"type": "linear", "factor": 4.0})");
  const LlmConfig none =
      llamaWithRope(R"("rope_scaling": {"rope_type": "default"})");
  EXPECT_EQ(plain.ropeScaling.type, RopeScaling::Type::None);
  EXPECT_EQ(linear.ropeScaling.type, RopeScaling::Type::Linear);
  for (int64_t i : {0, 5, 63}) {
    const double f = std::pow(10000.0, -2.0 * static_cast<double>(i) / 128);
    EXPECT_DOUBLE_EQ(plain.ropeInverseFrequency(i), f);
    EXPECT_DOUBLE_EQ(none.ropeInverseFrequency(i), f);
    EXPECT_DOUBLE_EQ(linear.ropeInverseFrequency(i), f / 4);
  }
}

TEST(LlmConfig, RopeScalingErrorsNameTheKey) {
  const std::string llama3 =
      R"("rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
         "original_max_position_embeddings": 8192)";
  auto err = [](const std::string &scaling) {
    return errorOf(llamaText(R"("rope_scaling": )" + scaling));
  };
  EXPECT_EQ(err(R"({"rope_type": "yarn", "factor": 4.0})"),
            "c.json: error: at 'rope_scaling.rope_type': 'yarn' is not built; "
            "supported: default, linear, llama3 (the forms whose frequencies "
            "do not depend on the step)");
  EXPECT_EQ(err(R"({"type": "dynamic", "factor": 2.0})"),
            "c.json: error: at 'rope_scaling.rope_type': 'dynamic' is not "
            "built; supported: default, linear, llama3 (the forms whose "
            "frequencies do not depend on the step)");
  EXPECT_EQ(err("{" + llama3 + "}"),
            "c.json: error: at 'rope_scaling.high_freq_factor': missing; "
            "rope_type 'llama3' needs it");
  EXPECT_EQ(err("{" + llama3 + R"(, "high_freq_factor": 0.5})"),
            "c.json: error: at 'rope_scaling.high_freq_factor': must be above "
            "low_freq_factor (1.0), got 0.5");
  EXPECT_EQ(err(R"({"rope_type": "linear", "factor": 0.5})"),
            "c.json: error: at 'rope_scaling.factor': must be at least 1, got "
            "0.5");
  EXPECT_EQ(err(R"({"rope_type": "linear"})"),
            "c.json: error: at 'rope_scaling.factor': missing; rope_type "
            "'linear' needs it");
  EXPECT_EQ(err(R"({"factor": 2.0})"),
            "c.json: error: at 'rope_scaling': names no rope_type");
  EXPECT_EQ(err(R"("linear")"),
            "c.json: error: at 'rope_scaling': expected an object or null, got "
            "string \"linear\"");
  EXPECT_EQ(
      err(R"({"rope_type": 3})"),
      "c.json: error: at 'rope_scaling.rope_type': expected a string, got "
      "number 3");
}

TEST(LlmConfig, LocatesEachBadKey) {
  const std::string base =
      R"("architectures": ["LlamaForCausalLM"], "intermediate_size": 1024,
         "num_attention_heads": 8, "num_hidden_layers": 3, "vocab_size": 1000)";
  EXPECT_EQ(errorOf("{" + base + "}"),
            "c.json: error: at 'hidden_size': missing; a LlamaForCausalLM or "
            "GraniteForCausalLM config.json gives it");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 512.5})"),
            "c.json: error: at 'hidden_size': expected an integer, got number "
            "512.5");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 99999999999})"),
            "c.json: error: at 'hidden_size': must be in [1, 16777216], got "
            "99999999999");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 512, "rms_norm_eps": -1})"),
            "c.json: error: at 'rms_norm_eps': must be a positive number, got "
            "-1");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 512, "tie_word_embeddings": 1})"),
            "c.json: error: at 'tie_word_embeddings': expected true or false, "
            "got number 1");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 512, "hidden_act": "gelu"})"),
            "c.json: error: at 'hidden_act': only 'silu' (SwiGLU) is built, got "
            "'gelu'");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 512, "mlp_bias": true})"),
            "c.json: error: at 'mlp_bias': biases are not built yet; only false "
            "is accepted");
  EXPECT_EQ(errorOf("{" + base + R"(, "hidden_size": 500})"),
            "c.json: error: at 'num_attention_heads': must divide hidden_size "
            "(500) when there is no head_dim, got 8");
  EXPECT_EQ(errorOf(R"({"architectures": "LlamaForCausalLM"})"),
            "c.json: error: at 'architectures': expected a list of one "
            "architecture name");
}

TEST(LlmConfig, RejectsBadJson) {
  EXPECT_EQ(errorOf("{\n  \"a\": 1,\n}"),
            "c.json:3:1: error: invalid JSON: syntax error while parsing "
            "object key - unexpected '}'; expected string literal");
  EXPECT_EQ(errorOf(R"({"a": 1, "a": 2})"),
            "c.json: error: invalid config.json: key 'a' is given twice");
  EXPECT_EQ(errorOf(std::string(20, '[') + std::string(20, ']')),
            "c.json: error: invalid config.json: nests deeper than 16 levels");
  EXPECT_EQ(errorOf("\"text\""),
            "c.json: error: a config.json holds one JSON object, got string");
}

TEST(LlmConfig, RefusesAnOversizedFile) {
  const std::string dir = test::makeTempDir();
  const std::string path = dir + "/big.json";
  {
    std::string text = "{\"pad\": \"" + std::string(kMaxConfigBytes, 'x') + "\"}";
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  try {
    loadLlmConfig(path);
    FAIL() << "no error";
  } catch (const UserError &e) {
    EXPECT_NE(e.diagnostic().str().find("at most 1048576 are read"),
              std::string::npos)
        << e.diagnostic().str();
  }
}

} // namespace
} // namespace spyre::llm
