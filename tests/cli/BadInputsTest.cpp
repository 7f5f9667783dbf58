// The bad-input catalogue (tests/bad-inputs/, README.md there): every case
// folder runs through the real `spyre` binary, in a fresh copy of the
// folder, and must give its stated exit code and first stderr line, a
// located message, no crash, and no file left behind (no partial output,
// no temporary file).
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace spyre::test {
namespace {

namespace fs = std::filesystem;

const char *const kCatalogue = "tests/bad-inputs";

/// One command of a case and what it must answer.
struct CaseCommand {
  std::string args;
  int exitCode = -1;
  std::string stderrLine;
};

struct Case {
  std::string name;
  std::vector<std::string> setup;
  std::vector<std::string> readOnly;
  std::vector<CaseCommand> runs;
  std::string problem; ///< set when case.txt itself is malformed
};

/// A case and the index of one of its runs: one test.
struct CaseRun {
  Case bad;
  size_t run = 0;
};

/// How gtest names a parameter in its messages.
void PrintTo(const CaseRun &c, std::ostream *os) {
  *os << c.bad.name << " run " << c.run + 1;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

/// Parses a case.txt; problems are kept in `problem` so that the case's own
/// test reports them.
Case parseCase(const std::string &name, const std::string &text) {
  Case c;
  c.name = name;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  auto problem = [&](const std::string &msg) {
    if (c.problem.empty())
      c.problem =
          "case.txt:" + (lineNo > 0 ? std::to_string(lineNo) + ": " : " ") +
          msg;
  };
  while (std::getline(in, line)) {
    ++lineNo;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    size_t colon = t.find(':');
    if (colon == std::string::npos) {
      problem("expected 'key: value'");
      continue;
    }
    std::string key = t.substr(0, colon);
    std::string value = trim(t.substr(colon + 1));
    if (key == "setup") {
      c.setup.push_back(value);
    } else if (key == "readonly") {
      c.readOnly.push_back(value);
    } else if (key == "args") {
      c.runs.push_back(CaseCommand{value, -1, ""});
    } else if (key == "exit" || key == "stderr") {
      if (c.runs.empty()) {
        problem("'" + key + ":' before any 'args:'");
        continue;
      }
      if (key == "stderr")
        c.runs.back().stderrLine = value;
      else if (value == "1" || value == "2")
        c.runs.back().exitCode = std::stoi(value);
      else
        problem("exit must be 1 (bad input) or 2 (usage), got '" + value + "'");
    } else {
      problem("unknown key '" + key + "'");
    }
  }
  lineNo = 0;
  if (c.runs.empty())
    problem("no 'args:' line");
  for (const CaseCommand &r : c.runs)
    if (r.exitCode < 0 || r.stderrLine.empty())
      problem("run '" + r.args + "' needs both 'exit:' and 'stderr:'");
  return c;
}

std::vector<CaseRun> allCaseRuns() {
  std::vector<CaseRun> out;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const fs::directory_entry &e :
       fs::directory_iterator(srcPath(kCatalogue), ec))
    if (e.is_directory())
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path &dir : dirs) {
    std::string name = dir.filename().string();
    Case c{name, {}, {}, {}, "no case.txt in the folder"};
    if (std::ifstream in(dir / "case.txt", std::ios::binary); in) {
      std::ostringstream text;
      text << in.rdbuf();
      c = parseCase(name, text.str());
    }
    for (size_t i = 0; i < std::max<size_t>(c.runs.size(), 1); ++i)
      out.push_back({c, i});
  }
  return out;
}

/// Splits on blanks; `'...'` quotes an argument holding blanks.
std::vector<std::string> splitArgs(const std::string &line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char ch : line) {
    if (ch == '\'') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && (ch == ' ' || ch == '\t')) {
      if (any)
        out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += ch;
      any = true;
    }
  }
  if (any)
    out.push_back(cur);
  return out;
}

/// Every file and folder under `dir` with its contents (folders: empty).
std::map<std::string, std::string> snapshot(const fs::path &dir) {
  std::map<std::string, std::string> files;
  for (const fs::directory_entry &e : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(e.path(), dir).string();
    if (!e.is_regular_file()) {
      files[rel + "/"] = "";
      continue;
    }
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    files[rel] = ss.str();
  }
  return files;
}

/// Fills in `{root}` (the source tree), `{fingerprint}` (the built-in
/// config's) and `{fingerprint:FILE}` (a config file's, relative to `cwd`).
std::string expand(std::string text, const std::string &cwd) {
  static const std::regex placeholder(R"(\{(root|fingerprint)(:([^}]*))?\})");
  std::string out;
  std::smatch m;
  while (std::regex_search(text, m, placeholder)) {
    out += m.prefix().str();
    if (m[1] == "root") {
      out += SPYRE_SOURCE_DIR;
    } else {
      std::vector<std::string> args = {"config", "fingerprint"};
      if (m[3].matched)
        args.insert(args.end(), {"--config", m[3].str()});
      ToolResult r = runSpyre(args, cwd);
      EXPECT_EQ(r.exitCode, 0) << "spyre config fingerprint: " << r.err;
      out += firstLine(r.out);
    }
    text = m.suffix().str();
  }
  return out + text;
}

/// A located message: `file:line:col: error: `, `file: error: at 'path': `,
/// or `file: error: ` where the file is one the command line names (or a
/// file inside a folder it names, or an option with its value). `spyre: error:` is located only for a
/// usage error, where the command line is the location.
::testing::AssertionResult isLocated(const std::string &line,
                                     const std::vector<std::string> &args,
                                     int exitCode) {
  static const std::regex withLine(R"(^[^:\s][^:]*:[0-9]+:[0-9]+: error: .+)");
  static const std::regex withKey(R"(^[^:\s][^:]*: error: at '[^']+': .+)");
  if (std::regex_match(line, withLine) || std::regex_match(line, withKey))
    return ::testing::AssertionSuccess();
  size_t at = line.find(": error: ");
  if (at == std::string::npos || at == 0)
    return ::testing::AssertionFailure() << "not a diagnostic: " << line;
  std::string file = line.substr(0, at);
  if (file == "spyre")
    return exitCode == 2
               ? ::testing::AssertionSuccess()
               : ::testing::AssertionFailure() << "names no location: " << line;
  // The location is a file of the command line, or a flag named without
  // its dashes (`print-ir-after: error: ...` for --print-ir-after=...), or
  // a flag with its value as given (`--set KEY=VALUE: error: ...`).
  for (const std::string &a : args)
    if (file == a || file.rfind(a + "/", 0) == 0 || a == "--" + file ||
        a.rfind("--" + file + "=", 0) == 0)
      return ::testing::AssertionSuccess();
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i].rfind("--", 0) == 0 && file == args[i] + " " + args[i + 1])
      return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << file << "' is not a file of the command line: " << line;
}

class BadInputs : public ::testing::TestWithParam<CaseRun> {};

TEST_P(BadInputs, ExitsWithItsLocatedMessageAndLeavesNoFile) {
  const Case &c = GetParam().bad;
  ASSERT_TRUE(c.problem.empty())
      << kCatalogue << "/" << c.name << "/" << c.problem;
  const CaseCommand &run = c.runs[GetParam().run];
  if (!c.readOnly.empty() && ::geteuid() == 0)
    GTEST_SKIP() << "root writes into read-only folders";

  fs::path work = fs::path(makeTempDir()) / c.name;
  fs::copy(srcPath(std::string(kCatalogue) + "/" + c.name), work,
           fs::copy_options::recursive);
  for (const std::string &setup : c.setup) {
    ToolResult r =
        runSpyre(splitArgs(expand(setup, work.string())), work.string());
    ASSERT_EQ(r.exitCode, 0) << "setup 'spyre " << setup << "' failed:\n"
                             << r.out << r.err;
  }
  for (const std::string &dir : c.readOnly) {
    fs::create_directories(work / dir);
    fs::permissions(work / dir,
                    fs::perms::owner_write | fs::perms::group_write |
                        fs::perms::others_write,
                    fs::perm_options::remove);
  }
  std::map<std::string, std::string> before = snapshot(work);

  std::vector<std::string> args = splitArgs(expand(run.args, work.string()));
  ToolResult r = runSpyre(args, work.string());
  std::string expected = expand(run.stderrLine, work.string());

  SCOPED_TRACE("spyre " + run.args);
  EXPECT_EQ(r.exitCode, run.exitCode) << r.out << r.err;
  EXPECT_EQ(firstLine(r.err), expected) << r.err;
  EXPECT_TRUE(isLocated(firstLine(r.err), args, r.exitCode));
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;

  std::map<std::string, std::string> after = snapshot(work);
  for (const auto &[path, bytes] : after) {
    auto old = before.find(path);
    EXPECT_TRUE(old != before.end()) << "left behind: " << path;
    if (old != before.end()) {
      EXPECT_TRUE(old->second == bytes) << "changed: " << path;
    }
  }
  for (const auto &[path, bytes] : before)
    EXPECT_TRUE(after.count(path)) << "removed: " << path;
  for (const std::string &dir : c.readOnly)
    fs::permissions(work / dir, fs::perms::owner_all, fs::perm_options::add);
}

std::string caseRunName(const ::testing::TestParamInfo<CaseRun> &info) {
  std::string name = info.param.bad.name;
  if (info.param.bad.runs.size() > 1)
    name += "_" + std::to_string(info.param.run + 1);
  std::replace_if(
      name.begin(), name.end(),
      [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); },
      '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInputs,
                         ::testing::ValuesIn(allCaseRuns()), caseRunName);

// The catalogue is found by listing a folder: an empty list would pass
// silently, so its presence is a test of its own.
TEST(BadInputsCatalogue, HasCases) {
  EXPECT_GE(allCaseRuns().size(), 20u) << "cases in " << srcPath(kCatalogue);
}

} // namespace
} // namespace spyre::test
