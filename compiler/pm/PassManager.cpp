// The pass manager and the pipeline text parser.
#include "compiler/pm/PassManager.h"

#include "compiler/ir/Printer.h"
#include "compiler/ir/Verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <ostream>

namespace spyre::compiler {

PassInvocation invocation(const PassInfo &pass) {
  return {&pass, PassOptions(pass)};
}

// ---- Pipeline text ----

namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_';
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class PipelineParser {
public:
  PipelineParser(std::string_view text,
                 std::span<const PassInfo *const> passes,
                 DiagnosticEngine &diags, const std::string &sourceName)
      : text_(text), passes_(passes), diags_(diags), sourceName_(sourceName) {}

  std::optional<Pipeline> parse() {
    Pipeline pipeline;
    skipSpace();
    if (atEnd())
      return pipeline;
    while (true) {
      std::optional<PassInvocation> inv = parsePass();
      if (!inv)
        return std::nullopt;
      pipeline.push_back(std::move(*inv));
      skipSpace();
      if (atEnd())
        return pipeline;
      if (text_[pos_] != ',')
        return fail(pos_, "expected ',' or the end of the pipeline");
      ++pos_;
    }
  }

private:
  bool atEnd() const { return pos_ >= text_.size(); }

  void skipSpace() {
    while (!atEnd() && isSpace(text_[pos_]))
      ++pos_;
  }

  std::string_view readName() {
    size_t start = pos_;
    while (!atEnd() && isNameChar(text_[pos_]))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::nullopt_t fail(size_t at, const std::string &message) {
    size_t lineStart = at;
    while (lineStart > 0 && text_[lineStart - 1] != '\n')
      --lineStart;
    size_t lineEnd = text_.find('\n', lineStart);
    auto begin = text_.begin();
    int line =
        1 + static_cast<int>(std::count(
                begin, begin + static_cast<std::ptrdiff_t>(lineStart), '\n'));
    Diagnostic d;
    d.loc = SourceLoc{sourceName_, line, static_cast<int>(at - lineStart) + 1};
    d.message = message;
    d.sourceLine = std::string(text_.substr(lineStart, lineEnd - lineStart));
    diags_.report(std::move(d));
    return std::nullopt;
  }

  std::optional<PassInvocation> parsePass() {
    skipSpace();
    size_t start = pos_;
    std::string_view name = readName();
    if (name.empty())
      return fail(start, "expected a pass name");
    const PassInfo *pass = findPass(name);
    if (!pass)
      return fail(start, "unknown pass '" + std::string(name) +
                             "' (passes: " + passNames() + ")");
    PassInvocation inv = invocation(*pass);
    skipSpace();
    if (atEnd() || text_[pos_] != '{')
      return inv;
    size_t open = pos_++;
    std::map<std::string, bool, std::less<>> seen;
    while (true) {
      skipSpace();
      if (atEnd())
        return fail(open,
                    "'{' of pass '" + std::string(name) + "' is not closed");
      if (text_[pos_] == '}') {
        ++pos_;
        return inv;
      }
      size_t keyStart = pos_;
      std::string key(readName());
      if (key.empty())
        return fail(keyStart, "expected an option name");
      if (atEnd() || text_[pos_] != '=')
        return fail(pos_, "expected '=' after option '" + key + "'");
      ++pos_;
      size_t valueStart = pos_;
      while (!atEnd() && !isSpace(text_[pos_]) && text_[pos_] != '}')
        ++pos_;
      std::string_view valueText = text_.substr(valueStart, pos_ - valueStart);
      if (seen.contains(key))
        return fail(keyStart, "option '" + key + "' is given twice");
      seen[key] = true;
      const OptionSpec *spec = pass->findOption(key);
      if (!spec) {
        std::string known;
        for (const OptionSpec &o : pass->options)
          known += (known.empty() ? "" : ", ") + std::string(o.name);
        return fail(
            keyStart,
            "pass '" + std::string(name) + "' has no option '" + key + "' (" +
                (known.empty() ? "it takes none" : "it takes " + known) + ")");
      }
      std::string error;
      std::optional<Attribute> value =
          parseOptionValue(*spec, valueText, error);
      if (!value)
        return fail(valueStart, "option '" + key + "' of pass '" +
                                    std::string(name) + "': " + error);
      inv.options.set(key, std::move(*value));
    }
  }

  const PassInfo *findPass(std::string_view name) const {
    for (const PassInfo *p : passes_)
      if (p->name == name)
        return p;
    return nullptr;
  }

  std::string passNames() const {
    std::string out;
    for (const PassInfo *p : passes_)
      out += (out.empty() ? "" : ", ") + std::string(p->name);
    return out;
  }

  std::string_view text_;
  std::span<const PassInfo *const> passes_;
  DiagnosticEngine &diags_;
  const std::string &sourceName_;
  size_t pos_ = 0;
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

std::optional<Pipeline> parsePipeline(std::string_view text,
                                      std::span<const PassInfo *const> passes,
                                      DiagnosticEngine &diags,
                                      const std::string &sourceName) {
  return PipelineParser(text, passes, diags, sourceName).parse();
}

std::string pipelineText(const Pipeline &pipeline) {
  std::string out;
  for (const PassInvocation &inv : pipeline)
    out += (out.empty() ? "" : ",") + invocationText(*inv.pass, inv.options);
  return out;
}

std::string requirementProblem(const Pipeline &pipeline) {
  for (size_t i = 0; i < pipeline.size(); ++i) {
    const std::vector<std::string_view> &needs =
        pipeline[i].pass->requiredBefore;
    size_t next = 0;
    for (size_t j = 0; j < i && next < needs.size(); ++j)
      if (pipeline[j].pass->name == needs[next])
        ++next;
    if (next == needs.size())
      continue;
    std::string list;
    for (size_t k = 0; k < needs.size(); ++k)
      list += (k == 0 ? "" : k + 1 == needs.size() ? " and " : ", ") +
              std::string(needs[k]);
    return "pass '" + std::string(pipeline[i].pass->name) + "' needs " +
           list + " before it" + (needs.size() > 1 ? ", in that order" : "") +
           "; '" + std::string(needs[next]) + "' is missing";
  }
  return "";
}

// ---- PassManager ----

PassManager::PassManager(const hw::HwConfig &hw, PassManagerOptions options)
    : hw_(hw), options_(std::move(options)) {}

void PassManager::addPass(const PassInfo &pass) {
  pipeline_.push_back(invocation(pass));
}

void PassManager::addPass(const PassInfo &pass, PassOptions options) {
  pipeline_.push_back({&pass, std::move(options)});
}

void PassManager::addPipeline(const Pipeline &pipeline) {
  pipeline_.insert(pipeline_.end(), pipeline.begin(), pipeline.end());
}

bool PassManager::wants(const std::vector<std::string> &names,
                        std::string_view pass) const {
  return std::any_of(names.begin(), names.end(), [&](const std::string &n) {
    return n == "all" || n == pass;
  });
}

bool PassManager::checkNames(DiagnosticEngine &diags) const {
  std::string inPipeline;
  for (const PassInvocation &inv : pipeline_)
    inPipeline +=
        (inPipeline.empty() ? "" : ", ") + std::string(inv.pass->name);
  auto known = [&](std::string_view name) {
    return std::any_of(
        pipeline_.begin(), pipeline_.end(),
        [&](const PassInvocation &inv) { return inv.pass->name == name; });
  };
  bool ok = true;
  auto check = [&](std::string_view flag, const std::string &name,
                   bool allowAll) {
    if ((allowAll && name == "all") || known(name))
      return;
    diags.error(SourceLoc{std::string(flag)},
                "'" + name + "' is not a pass of the pipeline (" +
                    (inPipeline.empty() ? "which is empty" : inPipeline) + ")");
    ok = false;
  };
  for (const std::string &n : options_.printIrAfter)
    check("print-ir-after", n, true);
  for (const std::string &n : options_.printIrBefore)
    check("print-ir-before", n, true);
  if (!options_.stopAfter.empty())
    check("stop-after", options_.stopAfter, false);
  return ok;
}

PipelineStatus PassManager::run(Graph &graph, DiagnosticEngine &diags) {
  records_.clear();
  stoppedAt_.clear();
  target_.program.reset();
  if (!checkNames(diags))
    return PipelineStatus::Failure;
  if (std::string problem = requirementProblem(pipeline_); !problem.empty()) {
    diags.error(SourceLoc{"<pipeline>"}, problem);
    return PipelineStatus::Failure;
  }
  DiagnosticEngine inputDiags;
  if (!verifyGraph(graph, inputDiags)) {
    for (const Diagnostic &d : inputDiags.diagnostics())
      diags.report(d);
    diags.error(graphLoc(graph),
                "the input graph does not verify; no pass ran");
    return PipelineStatus::Failure;
  }
  for (const PassInvocation &inv : pipeline_) {
    std::string name(inv.pass->name);
    if (options_.irStream && wants(options_.printIrBefore, name))
      *options_.irStream << "// IR before "
                         << invocationText(*inv.pass, inv.options) << "\n"
                         << printGraph(graph);
    PipelineStatus status = runOne(inv, graph, diags);
    if (status != PipelineStatus::Success) {
      stoppedAt_ = name;
      return status;
    }
    if (options_.irStream && wants(options_.printIrAfter, name))
      *options_.irStream << "// IR after "
                         << invocationText(*inv.pass, inv.options) << "\n"
                         << printGraph(graph);
    if (options_.stopAfter == name) {
      stoppedAt_ = name;
      return PipelineStatus::Success;
    }
  }
  return PipelineStatus::Success;
}

PipelineStatus PassManager::runOne(const PassInvocation &inv, Graph &graph,
                                   DiagnosticEngine &diags) {
  const PassInfo &pass = *inv.pass;
  std::string name(pass.name);
  PassContext context(pass, inv.options, hw_, diags, &target_);
  PassRunRecord record;
  record.pass = name;
  record.invocation = invocationText(pass, inv.options);
  record.info = &pass;
  auto finish = [&](PipelineStatus status) {
    record.statistics = context.statistics();
    record.status = status;
    records_.push_back(record);
    return status;
  };
  auto internal = [&](const std::string &message,
                      const DiagnosticEngine *details) {
    diags.error(graphLoc(graph),
                "internal error in pass '" + name + "': " + message);
    if (details)
      for (const Diagnostic &d : details->diagnostics())
        diags.report(d);
    diags.note(graphLoc(graph),
               "the IR after pass '" + name + "':\n" + printGraph(graph));
    return finish(PipelineStatus::InternalError);
  };

  size_t errorsBefore = diags.errorCount();
  PassResult result = PassResult::Failure;
  auto start = std::chrono::steady_clock::now();
  try {
    result = name == options_.debugFailPass ? PassResult::Failure
                                            : pass.run(graph, context);
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    result = PassResult::Failure;
  } catch (const std::exception &e) {
    record.seconds = secondsSince(start);
    return internal(std::string("it threw: ") + e.what(), nullptr);
  } catch (...) {
    record.seconds = secondsSince(start);
    return internal("it threw something that is not a std::exception", nullptr);
  }
  record.seconds = secondsSince(start);

  bool reported = diags.errorCount() > errorsBefore;
  if (result == PassResult::Failure) {
    if (!reported)
      return internal("it failed without reporting an error", nullptr);
    return finish(PipelineStatus::Failure);
  }
  if (reported)
    return internal("it reported errors but returned success", nullptr);

  DiagnosticEngine check;
  if (!verifyGraph(graph, check))
    return internal("the IR it produced does not verify", &check);
  if (pass.postcondition && !pass.postcondition(graph, context, check))
    return internal("its postcondition does not hold", &check);
  if (check.hasErrors())
    return internal("its postcondition reported errors but returned true",
                    &check);
  return finish(PipelineStatus::Success);
}

std::string PassManager::statisticsReport() const {
  std::string out;
  for (const PassRunRecord &r : records_) {
    const PassInfo *pass = r.info;
    out += r.invocation + "\n";
    if (!pass || pass->statistics.empty())
      continue;
    size_t nameWidth = 0, numberWidth = 0;
    for (size_t i = 0; i < pass->statistics.size(); ++i) {
      nameWidth = std::max(nameWidth, pass->statistics[i].name.size());
      numberWidth =
          std::max(numberWidth, std::to_string(r.statistics[i]).size());
    }
    for (size_t i = 0; i < pass->statistics.size(); ++i)
      out += fmt::format("  {:<{}}  {:>{}}  {}\n", pass->statistics[i].name,
                         nameWidth, r.statistics[i], numberWidth,
                         pass->statistics[i].description);
  }
  return out;
}

std::string PassManager::timingReport() const {
  std::string out;
  double total = 0;
  for (const PassRunRecord &r : records_) {
    out += fmt::format("  {:>10.3f} ms  {}\n", r.seconds * 1e3, r.invocation);
    total += r.seconds;
  }
  return out + fmt::format("  {:>10.3f} ms  total\n", total * 1e3);
}

} // namespace spyre::compiler
