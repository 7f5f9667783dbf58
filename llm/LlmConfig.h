// The description of a decoder language model as Hugging Face writes it: the
// `config.json` next to a checkpoint, for the `LlamaForCausalLM` and
// `GraniteForCausalLM` architectures (docs/llm.md). Keys this project does
// not use (token ids, dropout, dtype, ...) are ignored; every key it uses is
// checked, and a bad or missing one is a UserError `file: error: at 'key':
// ...`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spyre::llm {

enum class Architecture { Llama, Granite };

/// `rope_scaling` of a config.json: how the rotary frequencies are scaled
/// for contexts longer than the model was trained on (Hugging Face's
/// `ROPE_INIT_FUNCTIONS`). Only the forms that change the frequencies alone,
/// whatever the step, are built; the others are refused by name.
struct RopeScaling {
  enum class Type {
    None,   ///< null, or rope_type "default"
    Linear, ///< every frequency divided by `factor`
    Llama3, ///< Llama 3.1's: low frequencies divided by `factor`, high ones
            ///< kept, a smooth blend between
  };
  Type type = Type::None;
  double factor = 1.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  double originalMaxPositions = 8192.0;
};

struct LlmConfig {
  std::string file; ///< where it was read from, for messages
  Architecture architecture = Architecture::Llama;
  int64_t hiddenSize = 0;
  int64_t intermediateSize = 0;
  int64_t numHeads = 0;
  int64_t numKvHeads = 0; ///< num_key_value_heads, else numHeads
  int64_t headDim = 0;    ///< head_dim, else hiddenSize / numHeads
  int64_t numLayers = 0;
  int64_t vocabSize = 0;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  RopeScaling ropeScaling;
  bool tieWordEmbeddings = false;
  // Granite's multipliers (Hugging Face's GraniteConfig defaults: 1).
  double embeddingMultiplier = 1.0;
  /// Granite: the scale of the attention scores, replacing 1/sqrt(headDim).
  double attentionMultiplier = 1.0;
  double residualMultiplier = 1.0;
  /// Granite divides the logits by it.
  double logitsScaling = 1.0;

  /// The architecture's name as config.json spells it.
  std::string architectureName() const;
  /// The factor of the attention scores: Granite's attention_multiplier,
  /// Llama's 1/sqrt(head_dim).
  double attentionScale() const;
  /// The inverse frequency of rotary pair `i` (of headDim / 2):
  /// rope_theta^(-2i / headDim), scaled as `ropeScaling` says.
  double ropeInverseFrequency(int64_t i) const;
  /// Query heads per key/value head.
  int64_t groupSize() const { return numHeads / numKvHeads; }
  /// Parameters of one decoder layer (norms included).
  int64_t layerParameters() const;
};

/// Largest config.json read, and deepest nesting of arrays and objects
/// (real configs are a few KiB and 3 levels deep).
constexpr size_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxConfigDepth = 16;

/// Parses the text of a config.json; `file` names it in messages.
LlmConfig parseLlmConfig(std::string_view text, const std::string &file);

/// Reads and parses the file `path`.
LlmConfig loadLlmConfig(const std::string &path);

} // namespace spyre::llm
