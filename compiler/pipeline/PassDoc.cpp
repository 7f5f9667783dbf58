// Documentation of the registered passes, generated from their declarations.
#include "compiler/pipeline/PassDoc.h"

#include "compiler/pipeline/PassRegistry.h"

#include <cstring>
#include <string_view>
#include <vector>

namespace spyre::compiler {

namespace {

std::string optionTypeText(const OptionSpec &o) {
  if (o.type != OptionType::Enum)
    return std::string(optionTypeName(o.type));
  std::string out;
  for (std::string_view c : o.choices)
    out += (out.empty() ? "" : "|") + std::string(c);
  return out;
}

std::string defaultText(const OptionSpec &o) {
  return o.defaultText.empty() ? "(empty)" : std::string(o.defaultText);
}

/// The type column of the Markdown table: `enum: a, b` lists the choices.
std::string optionTypeMarkdown(const OptionSpec &o) {
  if (o.type != OptionType::Enum)
    return std::string(optionTypeName(o.type));
  std::string out;
  for (std::string_view c : o.choices)
    out += (out.empty() ? "" : ", ") + ("`" + std::string(c) + "`");
  return "one of " + out;
}

/// The passes whose requiredBefore names `name`, in registry order.
std::vector<std::string_view> requiredBy(std::string_view name) {
  std::vector<std::string_view> out;
  for (const PassInfo *p : passRegistry())
    for (std::string_view needed : p->requiredBefore)
      if (needed == name)
        out.push_back(p->name);
  return out;
}

/// `a, b, c`, each name wrapped in `quote`.
std::string nameList(const std::vector<std::string_view> &names,
                     std::string_view quote = "") {
  std::string out;
  for (std::string_view n : names)
    out += (out.empty() ? "" : ", ") + std::string(quote) + std::string(n) +
           std::string(quote);
  return out;
}

std::string pipelineLine(int level) {
  std::optional<Pipeline> p = defaultPipeline(level);
  return "-O" + std::to_string(level) + ": " + pipelineText(*p);
}

} // namespace

std::string passListText() {
  std::string out;
  for (const PassInfo *p : passRegistry()) {
    out += std::string(p->name) + ": " + std::string(p->summary) + "\n";
    out += "  after it: " + std::string(p->postconditionText) + "\n";
    if (!p->requiredBefore.empty())
      out += "  requires before it, in order: " + nameList(p->requiredBefore) +
             "\n";
    if (std::vector<std::string_view> by = requiredBy(p->name); !by.empty())
      out += "  required before: " + nameList(by) + "\n";
    for (const OptionSpec &o : p->options)
      out += "  option " + std::string(o.name) + "=<" + optionTypeText(o) +
             "> (default " + defaultText(o) +
             "): " + std::string(o.description) + "\n";
    for (const StatisticSpec &s : p->statistics)
      out += "  statistic " + std::string(s.name) + ": " +
             std::string(s.description) + "\n";
  }
  out += "pipelines:\n";
  for (int level : {0, 1, 2})
    out += "  " + pipelineLine(level) + "\n";
  return out;
}

std::string passReferenceMarkdown() {
  std::string out = "| pass | summary |\n|---|---|\n";
  for (const PassInfo *p : passRegistry())
    out += "| [`" + std::string(p->name) + "`](#" + std::string(p->name) +
           ") | " + std::string(p->summary) + " |\n";
  out += "\nDefault pipelines:\n\n";
  for (int level : {0, 1, 2}) {
    std::string line = pipelineLine(level);
    size_t colon = line.find(": ");
    out +=
        "- `" + line.substr(0, colon) + "`: `" + line.substr(colon + 2) + "`\n";
  }
  for (const PassInfo *p : passRegistry()) {
    out += "\n### " + std::string(p->name) + "\n\n" + std::string(p->summary) +
           ".\n\n";
    out += "After it: " + std::string(p->postconditionText) + "\n\n";
    if (!p->requiredBefore.empty())
      out += "Requires before it, in this order (checked before a pipeline "
             "runs): " +
             nameList(p->requiredBefore, "`") + ".\n\n";
    if (std::vector<std::string_view> by = requiredBy(p->name); !by.empty())
      out += "Required before: " + nameList(by, "`") + ".\n\n";
    if (p->options.empty()) {
      out += "Options: none.\n\n";
    } else {
      out += "| option | type | default | description |\n|---|---|---|---|\n";
      for (const OptionSpec &o : p->options)
        out +=
            "| `" + std::string(o.name) + "` | " + optionTypeMarkdown(o) +
            " | " +
            (o.defaultText.empty() ? "(empty)"
                                   : "`" + std::string(o.defaultText) + "`") +
            " | " + std::string(o.description) + " |\n";
      out += "\n";
    }
    if (p->statistics.empty()) {
      out += "Statistics: none.\n";
      continue;
    }
    out += "| statistic | counts |\n|---|---|\n";
    for (const StatisticSpec &s : p->statistics)
      out += "| `" + std::string(s.name) + "` | " + std::string(s.description) +
             " |\n";
  }
  return out;
}

std::optional<std::string> updatePassReference(const std::string &doc) {
  size_t begin = doc.find(kPassReferenceBegin);
  if (begin == std::string::npos)
    return std::nullopt;
  size_t bodyStart = begin + std::strlen(kPassReferenceBegin);
  size_t end = doc.find(kPassReferenceEnd, bodyStart);
  if (end == std::string::npos)
    return std::nullopt;
  return doc.substr(0, bodyStart) + "\n\n" + passReferenceMarkdown() + "\n" +
         doc.substr(end);
}

} // namespace spyre::compiler
