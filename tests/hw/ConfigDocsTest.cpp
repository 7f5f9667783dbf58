// docs/config.md carries the key reference generated from the schema; this
// test keeps it from drifting. SPYRE_UPDATE_GOLDEN=1 rewrites the generated
// part (between the markers) in place.
#include "hw/ConfigSchema.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace spyre;

TEST(ConfigDocs, KeyReferenceMatchesTheSchema) {
  const std::string begin =
      "<!-- BEGIN generated from hw/ConfigSchema.cpp -->\n";
  const std::string end = "<!-- END generated -->\n";
  std::string doc = test::readSource("docs/config.md");
  size_t from = doc.find(begin);
  size_t to = doc.find(end);
  ASSERT_NE(from, std::string::npos) << "missing marker " << begin;
  ASSERT_NE(to, std::string::npos) << "missing marker " << end;
  ASSERT_LT(from, to);
  from += begin.size();
  std::string generated = "\n" + hw::configReferenceMarkdown() + "\n";

  const char *update = std::getenv("SPYRE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    doc.replace(from, to - from, generated);
    std::ofstream(test::srcPath("docs/config.md"), std::ios::binary) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(from, to - from), generated)
      << "docs/config.md is stale; run scripts/update-golden.sh";
}
