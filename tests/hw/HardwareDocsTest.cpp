// docs/hardware.md is the project's account of the hardware model: every
// config figure is listed there with its confidence, and code, configs and
// docs cite its sections by anchor. These tests keep the citations pointing
// at headings that exist, the confidences in step with the schema, and keep
// every citation inside the repository.
#include "hw/ConfigSchema.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace spyre;

namespace {

/// The anchor a Markdown renderer gives a heading: lower case, spaces to
/// hyphens, punctuation other than '-' and '_' dropped.
std::string anchorOf(const std::string &heading) {
  std::string anchor;
  for (char c : heading) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u))
      anchor += static_cast<char>(std::tolower(u));
    else if (c == ' ' || c == '-')
      anchor += '-';
    else if (c == '_')
      anchor += '_';
  }
  return anchor;
}

/// Anchors of every heading of a docs/ page.
std::set<std::string> anchorsOf(const std::string &page) {
  std::set<std::string> anchors;
  std::istringstream in(test::readSource(page));
  std::string line;
  bool inFence = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0)
      inFence = !inFence;
    if (inFence || line.empty() || line[0] != '#')
      continue;
    size_t text = line.find_first_not_of('#');
    if (text == std::string::npos || line[text] != ' ')
      continue;
    anchors.insert(anchorOf(line.substr(text + 1)));
  }
  return anchors;
}

struct Command {
  int status = -1;
  std::string out;
};

/// Runs a shell command in the source tree and captures its stdout.
Command run(const std::string &command) {
  Command result;
  std::string full = "cd '" + test::srcPath("") + "' && " + command;
  FILE *pipe = popen(full.c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.out.append(buffer, n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool inGitCheckout() {
  return run("git rev-parse --is-inside-work-tree >/dev/null 2>&1").status == 0;
}

} // namespace

TEST(HardwareDocs, AnchorsFollowTheHeadings) {
  EXPECT_EQ(anchorOf("Corelets and the PT"), "corelets-and-the-pt");
  EXPECT_EQ(anchorOf("`spyre compile`: from a graph"),
            "spyre-compile-from-a-graph");
  std::set<std::string> anchors = anchorsOf("docs/hardware.md");
  for (const char *section :
       {"confidence", "chip-and-clock", "sfu", "lx", "device-memory", "dma",
        "data-ring", "reduce-ring", "host-link", "limits", "device-layout",
        "measured-figures"})
    EXPECT_TRUE(anchors.count(section)) << section;
}

TEST(HardwareDocs, EveryFigureIsListedWithTheSchemasConfidence) {
  std::string doc = test::readSource("docs/hardware.md");
  for (const hw::ParamInfo &p : hw::configSchema()) {
    if (p.confidence.empty())
      continue;
    std::string key = "`" + std::string(p.path) + "`";
    size_t at = doc.find(key);
    ASSERT_NE(at, std::string::npos) << p.path << " is not in docs/hardware.md";
    size_t begin = doc.rfind('\n', at) + 1;
    std::string row = doc.substr(begin, doc.find('\n', at) - begin);
    EXPECT_NE(row.find("| " + std::string(p.confidence) + " |"),
              std::string::npos)
        << p.path << ": confidence " << p.confidence
        << " not in its row of docs/hardware.md: " << row;
  }
}

TEST(HardwareDocs, SchemaSourcesNameExistingSections) {
  std::set<std::string> anchors = anchorsOf("docs/hardware.md");
  const std::string prefix = "docs/hardware.md#";
  for (const hw::ParamInfo &p : hw::configSchema()) {
    std::string source(p.source);
    size_t at = source.find(prefix);
    if (at == std::string::npos)
      continue;
    size_t from = at + prefix.size();
    size_t to = source.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyz0123456789-_", from);
    std::string anchor = source.substr(from, to - from);
    EXPECT_TRUE(anchors.count(anchor))
        << p.path << " cites " << prefix << anchor
        << ", which is not a heading of docs/hardware.md";
  }
}

TEST(HardwareDocs, EveryCitedDocsAnchorExists) {
  if (!inGitCheckout())
    GTEST_SKIP() << "not a git checkout";
  Command grep = run("git grep -h -o -I -E "
                     "'docs/[a-z0-9_-]+[.]md#[a-z0-9_-]+' -- . 2>&1");
  ASSERT_TRUE(grep.status == 0 || grep.status == 1) << grep.out;
  std::istringstream in(grep.out);
  std::string cite;
  int checked = 0;
  while (std::getline(in, cite)) {
    size_t hash = cite.find('#');
    std::string page = cite.substr(0, hash);
    std::string anchor = cite.substr(hash + 1);
    EXPECT_TRUE(anchorsOf(page).count(anchor))
        << cite << ": no such heading in " << page;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// The design notes the hardware model was first written from are not part of
// the repository; docs/hardware.md replaces them, so nothing may cite them.
TEST(HardwareDocs, NoTrackedFileCitesDesignNotesOutsideTheRepository) {
  if (!inGitCheckout())
    GTEST_SKIP() << "not a git checkout";
  Command grep = run("git grep -n -I -E -e 'DESIGN[.]md' -e '[.][.]/shared/' "
                     "-- . 2>&1");
  EXPECT_EQ(grep.status, 1) << "cite docs/hardware.md instead:\n" << grep.out;
}
