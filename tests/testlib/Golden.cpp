#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace spyre::test {

std::string srcPath(const std::string &relative) {
  return std::string(SPYRE_SOURCE_DIR) + "/" + relative;
}

std::string readSource(const std::string &relative) {
  std::ifstream in(srcPath(relative), std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing file " << srcPath(relative);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expectGolden(const std::string &actual, const std::string &name) {
  std::string path = srcPath("tests/golden/" + name);
  const char *update = std::getenv("SPYRE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary);
    out << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (run scripts/update-golden.sh)";
  std::ostringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), actual) << "output differs from golden file " << path;
}

namespace {
struct TempDirs {
  std::vector<fs::path> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const fs::path &d : dirs)
      fs::remove_all(d, ec);
  }
};
TempDirs &tempDirs() {
  static TempDirs t;
  return t;
}
} // namespace

std::string makeTempDir() {
  std::string tmpl = (fs::temp_directory_path() / "spyre-test-XXXXXX").string();
  char *made = ::mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr) << "mkdtemp failed";
  tempDirs().dirs.emplace_back(tmpl);
  return tmpl;
}

} // namespace spyre::test
