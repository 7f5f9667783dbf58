#include "support/FileIO.h"

#include "support/Diagnostic.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace spyre;

TEST(FileIO, RoundTripsBytes) {
  std::string dir = test::makeTempDir();
  std::string bytes("a\0b\xff", 4);
  writeFileAtomic(dir + "/f.bin", bytes);
  EXPECT_EQ(readFile(dir + "/f.bin", kTextFileLimit), bytes);
}

TEST(FileIO, MissingFileIsUserErrorNamingPath) {
  try {
    readFile("/nonexistent/dir/x.yaml", kTextFileLimit);
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

TEST(FileIO, SymlinkStaysALinkAndItsTargetGetsTheBytes) {
  std::string dir = test::makeTempDir();
  writeFileAtomic(dir + "/target.bin", "old");
  std::filesystem::create_symlink("target.bin", dir + "/link.bin");
  writeFileAtomic(dir + "/link.bin", "new");
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.bin"));
  EXPECT_EQ(readFile(dir + "/target.bin", kTextFileLimit), "new");
}

// A pipe (like /dev/null, a device) is written in place: renaming a
// temporary file over it would replace it with a regular file.
TEST(FileIO, PipeIsWrittenInPlaceNotReplaced) {
  std::string dir = test::makeTempDir();
  std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader open first (without blocking), so the write neither blocks
  // nor, were the pipe replaced, leaves the read waiting.
  int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  writeFileAtomic(fifo, "through the pipe");
  char buf[64] = {};
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0),
            "through the pipe");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}
