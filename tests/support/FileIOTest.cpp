#include "support/FileIO.h"

#include "support/Diagnostic.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace spyre;

TEST(FileIO, RoundTripsBytes) {
  std::string dir = test::makeTempDir();
  std::string bytes("a\0b\xff", 4);
  writeFileAtomic(dir + "/f.bin", bytes);
  EXPECT_EQ(readFile(dir + "/f.bin"), bytes);
}

TEST(FileIO, MissingFileIsUserErrorNamingPath) {
  try {
    readFile("/nonexistent/dir/x.yaml");
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              "/nonexistent/dir/x.yaml: error: cannot open file: No such file "
              "or directory");
  }
}

TEST(FileIO, UnwritablePathLeavesNothingBehind) {
  std::string dir = test::makeTempDir();
  EXPECT_THROW(writeFileAtomic(dir + "/no/such/dir/out.bin", "x"), UserError);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}
