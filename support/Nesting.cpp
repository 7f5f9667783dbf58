// Depth checks before the JSON and YAML parsers (Nesting.h). The JSON check
// is a scan of brackets outside strings; the YAML check drives yaml-cpp's
// event parser and stops it with an exception at the first collection too
// deep, before yaml-cpp's own recursion goes further.
#include "support/Nesting.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

namespace spyre {

std::optional<TextPos> findJsonTooDeep(std::string_view text, int maxDepth) {
  int depth = 0;
  bool inString = false;
  TextPos pos;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i, ++pos.col; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return TextPos{pos.line, pos.col, i};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if (c == '\n') {
      ++pos.line;
      pos.col = 1;
    } else {
      ++pos.col;
    }
  }
  return std::nullopt;
}

std::string jsonTooDeepMessage(int maxDepth) {
  return "JSON nests deeper than " + std::to_string(maxDepth) +
         " levels of arrays and objects here; at most " +
         std::to_string(maxDepth) + " are accepted";
}

void checkJsonDepth(std::string_view text, const std::string &file,
                    int maxDepth) {
  if (std::optional<TextPos> at = findJsonTooDeep(text, maxDepth))
    throw UserError(SourceLoc{file, at->line, at->col},
                    jsonTooDeepMessage(maxDepth));
}

namespace {

constexpr int kYamlDocumentsChecked = 2;

struct TooDeep {
  YAML::Mark mark;
};

/// Counts open collections and throws TooDeep at the first one too deep.
class DepthCounter : public YAML::EventHandler {
public:
  explicit DepthCounter(int maxDepth) : maxDepth_(maxDepth) {}

  void OnDocumentStart(const YAML::Mark &) override { depth_ = 0; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t,
                const std::string &) override {}
  void OnSequenceStart(const YAML::Mark &m, const std::string &,
                       YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(m);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark &m, const std::string &, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(m);
  }
  void OnMapEnd() override { --depth_; }

private:
  void open(const YAML::Mark &m) {
    if (++depth_ > maxDepth_)
      throw TooDeep{m};
  }

  int maxDepth_;
  int depth_ = 0;
};

} // namespace

std::optional<TextPos> findYamlTooDeep(std::string_view text, int maxDepth) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DepthCounter counter(maxDepth);
  try {
    // The readers look at the first document and where a second one
    // starts; past those yaml-cpp 0.7 can report null documents forever
    // after some malformed text (jbeder/yaml-cpp#1040).
    for (int doc = 0; doc < kYamlDocumentsChecked; ++doc)
      if (!parser.HandleNextDocument(counter))
        break;
  } catch (const TooDeep &deep) {
    if (deep.mark.is_null())
      return TextPos{};
    return TextPos{deep.mark.line + 1, deep.mark.column + 1,
                   static_cast<size_t>(deep.mark.pos)};
  }
  return std::nullopt;
}

std::string yamlTooDeepMessage(int maxDepth) {
  return "YAML nests deeper than " + std::to_string(maxDepth) +
         " levels of maps and lists here; at most " +
         std::to_string(maxDepth) + " are accepted";
}

} // namespace spyre
