#include "llm/LlmConfig.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/JsonKeys.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <set>
#include <vector>

namespace spyre::llm {

namespace {

using Json = nlohmann::json;

/// Largest dimension accepted (hidden, intermediate, vocabulary, heads):
/// far above any released model, and small enough that products of two stay
/// well inside int64.
constexpr int64_t kMaxDim = int64_t(1) << 24;
constexpr int64_t kMaxLayers = 4096;

/// Thrown from the parser callback; turned into a located error.
struct ParseLimit {
  std::string message;
};

class ConfigReader {
public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  LlmConfig read(std::string_view text) {
    const Json root = parse(text);
    if (!root.is_object())
      throw UserError(SourceLoc{file_},
                      "a config.json holds one JSON object, got " +
                          std::string(root.type_name()));
    LlmConfig c;
    c.file = file_;
    c.architecture = architecture(root);
    c.hiddenSize = dim(root, "hidden_size");
    c.intermediateSize = dim(root, "intermediate_size");
    c.numHeads = dim(root, "num_attention_heads");
    c.numKvHeads = root.contains("num_key_value_heads")
                       ? dim(root, "num_key_value_heads")
                       : c.numHeads;
    if (c.numHeads % c.numKvHeads != 0)
      fail("num_key_value_heads",
           "must divide num_attention_heads (" + std::to_string(c.numHeads) +
               "), got " + std::to_string(c.numKvHeads));
    if (root.contains("head_dim") && !root["head_dim"].is_null()) {
      c.headDim = dim(root, "head_dim");
    } else {
      if (c.hiddenSize % c.numHeads != 0)
        fail("num_attention_heads",
             "must divide hidden_size (" + std::to_string(c.hiddenSize) +
                 ") when there is no head_dim, got " +
                 std::to_string(c.numHeads));
      c.headDim = c.hiddenSize / c.numHeads;
    }
    if (c.headDim % 2 != 0)
      fail(root.contains("head_dim") ? "head_dim" : "num_attention_heads",
           "rotary embeddings need an even head dimension, got " +
               std::to_string(c.headDim));
    c.numLayers = integer(root, "num_hidden_layers", 1, kMaxLayers);
    c.vocabSize = dim(root, "vocab_size");
    c.rmsNormEps = positive(root, "rms_norm_eps", c.rmsNormEps);
    c.ropeTheta = positive(root, "rope_theta", c.ropeTheta);
    c.ropeScaling = ropeScaling(root);
    c.tieWordEmbeddings = boolean(root, "tie_word_embeddings", false);
    const bool granite = c.architecture == Architecture::Granite;
    for (const char *key : {"embedding_multiplier", "attention_multiplier",
                            "residual_multiplier", "logits_scaling"})
      if (!granite && root.contains(key) && !root[key].is_null())
        fail(key, "is a GraniteForCausalLM key; this config is " +
                      c.architectureName());
    if (granite) {
      c.embeddingMultiplier = positive(root, "embedding_multiplier", 1.0);
      c.attentionMultiplier = positive(root, "attention_multiplier", 1.0);
      c.residualMultiplier = positive(root, "residual_multiplier", 1.0);
      c.logitsScaling = positive(root, "logits_scaling", 1.0);
    }
    if (root.contains("hidden_act") &&
        string(root, "hidden_act") != "silu")
      fail("hidden_act", "only 'silu' (SwiGLU) is built, got '" +
                             string(root, "hidden_act") + "'");
    for (const char *key : {"attention_bias", "mlp_bias"})
      if (boolean(root, key, false))
        fail(key, "biases are not built yet; only false is accepted");
    return c;
  }

private:
  [[noreturn]] void fail(const std::string &key,
                         const std::string &message) const {
    throw UserError(SourceLoc{file_, 0, 0, key}, message);
  }

  Json parse(std::string_view text) {
    JsonDuplicateKeys keys;
    Json::parser_callback_t limits = [&](int depth, Json::parse_event_t event,
                                         Json &parsed) {
      if (depth > kMaxConfigDepth)
        throw ParseLimit{"nests deeper than " +
                         std::to_string(kMaxConfigDepth) + " levels"};
      if (std::optional<std::string> twice = keys.see(event, parsed))
        throw ParseLimit{"key '" + *twice + "' is given twice"};
      return true;
    };
    try {
      return Json::parse(text.begin(), text.end(), limits);
    } catch (const ParseLimit &limit) {
      throw UserError(SourceLoc{file_}, "invalid config.json: " +
                                            limit.message);
    } catch (const Json::parse_error &e) {
      throw UserError(syntaxError(e, text));
    } catch (const Json::exception &e) {
      // A number literal too large for any JSON number type (e.g. 1e405).
      std::string what = e.what();
      size_t at = what.find("] ");
      throw UserError(SourceLoc{file_},
                      "invalid JSON: " + (at == std::string::npos
                                              ? what
                                              : what.substr(at + 2)));
    }
  }

  Diagnostic syntaxError(const Json::parse_error &e,
                         std::string_view text) const {
    // e.byte is the 1-based offset of the last character read.
    size_t end = std::min(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1, col = 1;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    size_t at = what.find(": syntax error");
    std::string reason = at == std::string::npos
                             ? what
                             : what.substr(at + 2);
    Diagnostic d;
    d.loc = SourceLoc{file_, line, col};
    d.message = "invalid JSON: " + reason;
    return d;
  }

  const Json &require(const Json &root, const std::string &key) const {
    auto it = root.find(key);
    if (it == root.end() || it->is_null())
      fail(key, "missing; a " + std::string("LlamaForCausalLM or "
                                            "GraniteForCausalLM config.json "
                                            "gives it"));
    return *it;
  }

  Architecture architecture(const Json &root) const {
    const Json &a = require(root, "architectures");
    if (!a.is_array() || a.size() != 1 || !a[0].is_string())
      fail("architectures", "expected a list of one architecture name");
    const std::string name = a[0].get<std::string>();
    if (name == "LlamaForCausalLM")
      return Architecture::Llama;
    if (name == "GraniteForCausalLM")
      return Architecture::Granite;
    fail("architectures[0]",
         "'" + name +
             "' is not built; supported: LlamaForCausalLM, "
             "GraniteForCausalLM");
  }

  RopeScaling ropeScaling(const Json &root) const {
    RopeScaling r;
    auto it = root.find("rope_scaling");
    if (it == root.end() || it->is_null())
      return r;
    if (!it->is_object())
      fail("rope_scaling", "expected an object or null, got " + describe(*it));
    const Json &j = *it;
    // Hugging Face reads `rope_type`, and `type` in older configs.
    std::string kind;
    for (const char *key : {"rope_type", "type"})
      if (j.contains(key) && !j[key].is_null()) {
        if (!j[key].is_string())
          fail(std::string("rope_scaling.") + key,
               "expected a string, got " + describe(j[key]));
        kind = j[key].get<std::string>();
        break;
      }
    if (kind.empty())
      fail("rope_scaling", "names no rope_type");
    if (kind == "default")
      return r;
    if (kind == "linear")
      r.type = RopeScaling::Type::Linear;
    else if (kind == "llama3")
      r.type = RopeScaling::Type::Llama3;
    else
      fail("rope_scaling.rope_type",
           "'" + kind +
               "' is not built; supported: default, linear, llama3 (the "
               "forms whose frequencies do not depend on the step)");
    auto number = [&](const char *key, double fallback, bool required) {
      const std::string where = std::string("rope_scaling.") + key;
      if (!j.contains(key) || j[key].is_null()) {
        if (required)
          fail(where, "missing; rope_type '" + kind + "' needs it");
        return fallback;
      }
      if (!j[key].is_number())
        fail(where, "expected a number, got " + describe(j[key]));
      const double v = j[key].get<double>();
      if (!std::isfinite(v) || v <= 0)
        fail(where, "must be a positive number, got " + j[key].dump());
      return v;
    };
    r.factor = number("factor", 1.0, true);
    if (r.factor < 1)
      fail("rope_scaling.factor",
           "must be at least 1, got " + j["factor"].dump());
    if (r.type == RopeScaling::Type::Llama3) {
      r.lowFreqFactor = number("low_freq_factor", 1.0, true);
      r.highFreqFactor = number("high_freq_factor", 4.0, true);
      r.originalMaxPositions =
          number("original_max_position_embeddings", 8192.0, true);
      if (r.highFreqFactor <= r.lowFreqFactor)
        fail("rope_scaling.high_freq_factor",
             "must be above low_freq_factor (" + j["low_freq_factor"].dump() +
                 "), got " + j["high_freq_factor"].dump());
    }
    return r;
  }

  int64_t integer(const Json &root, const std::string &key, int64_t lo,
                  int64_t hi) const {
    const Json &j = require(root, key);
    if (!j.is_number_integer())
      fail(key, "expected an integer, got " + describe(j));
    if (j.is_number_unsigned() ? j.get<uint64_t>() > uint64_t(hi)
                               : j.get<int64_t>() < lo || j.get<int64_t>() > hi)
      fail(key, "must be in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "], got " + j.dump());
    return j.get<int64_t>();
  }

  int64_t dim(const Json &root, const std::string &key) const {
    return integer(root, key, 1, kMaxDim);
  }

  double positive(const Json &root, const std::string &key,
                  double fallback) const {
    auto it = root.find(key);
    if (it == root.end() || it->is_null())
      return fallback;
    if (!it->is_number())
      fail(key, "expected a number, got " + describe(*it));
    const double v = it->get<double>();
    if (!std::isfinite(v) || v <= 0)
      fail(key, "must be a positive number, got " + it->dump());
    return v;
  }

  bool boolean(const Json &root, const std::string &key,
               bool fallback) const {
    auto it = root.find(key);
    if (it == root.end() || it->is_null())
      return fallback;
    if (!it->is_boolean())
      fail(key, "expected true or false, got " + describe(*it));
    return it->get<bool>();
  }

  std::string string(const Json &root, const std::string &key) const {
    const Json &j = require(root, key);
    if (!j.is_string())
      fail(key, "expected a string, got " + describe(j));
    return j.get<std::string>();
  }

  static std::string describe(const Json &j) {
    std::string text = j.dump();
    if (text.size() > 40)
      text = text.substr(0, 37) + "...";
    return std::string(j.type_name()) + " " + text;
  }

  std::string file_;
};

} // namespace

std::string LlmConfig::architectureName() const {
  return architecture == Architecture::Granite ? "GraniteForCausalLM"
                                               : "LlamaForCausalLM";
}

double LlmConfig::attentionScale() const {
  return architecture == Architecture::Granite
             ? attentionMultiplier
             : 1.0 / std::sqrt(static_cast<double>(headDim));
}

double LlmConfig::ropeInverseFrequency(int64_t i) const {
  const double base = std::pow(ropeTheta, -2.0 * static_cast<double>(i) /
                                              static_cast<double>(headDim));
  const RopeScaling &r = ropeScaling;
  switch (r.type) {
  case RopeScaling::Type::None:
    return base;
  case RopeScaling::Type::Linear:
    return base / r.factor;
  case RopeScaling::Type::Llama3: {
    // Wavelengths shorter than original / high_freq_factor positions keep
    // their frequency, longer than original / low_freq_factor ones are
    // divided by the factor, and those between blend the two linearly in
    // original / wavelength.
    const double pi = std::acos(-1.0);
    const double wavelength = 2 * pi / base;
    const double high = r.originalMaxPositions / r.highFreqFactor,
                 low = r.originalMaxPositions / r.lowFreqFactor;
    if (wavelength < high)
      return base;
    if (wavelength > low)
      return base / r.factor;
    const double smooth =
        (r.originalMaxPositions / wavelength - r.lowFreqFactor) /
        (r.highFreqFactor - r.lowFreqFactor);
    return (1 - smooth) * base / r.factor + smooth * base;
  }
  }
  SPYRE_UNREACHABLE("rope scaling type");
}

int64_t LlmConfig::layerParameters() const {
  const int64_t attention =
      hiddenSize * (numHeads + 2 * numKvHeads) * headDim +
      numHeads * headDim * hiddenSize;
  const int64_t mlp = 3 * hiddenSize * intermediateSize;
  return attention + mlp + 2 * hiddenSize;
}

LlmConfig parseLlmConfig(std::string_view text, const std::string &file) {
  return ConfigReader(file).read(text);
}

LlmConfig loadLlmConfig(const std::string &path) {
  std::error_code ec;
  // A device or pipe (/dev/zero) could be read without end.
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) &&
      !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status))
    throw UserError(SourceLoc{path}, "not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxConfigBytes)
    throw UserError(SourceLoc{path},
                    "a config.json of " + std::to_string(size) +
                        " bytes; at most " + std::to_string(kMaxConfigBytes) +
                        " are read");
  const std::string text = readFile(path, kConfigFileLimit);
  if (text.size() > kMaxConfigBytes)
    throw UserError(SourceLoc{path}, "a config.json of more than " +
                                         std::to_string(kMaxConfigBytes) +
                                         " bytes");
  return parseLlmConfig(text, path);
}

} // namespace spyre::llm
