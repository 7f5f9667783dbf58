#include "support/FileIO.h"

#include "support/Diagnostic.h"
#include "testlib/FileSizeLimit.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>

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

namespace {

/// The names in `dir`, sorted.
std::vector<std::string> namesIn(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST(FileSink, CommitPutsTheFileInPlaceOnlyAtTheEnd) {
  std::string dir = test::makeTempDir();
  const std::string path = dir + "/trace.json";
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FileSink file(path);
  file.write("{\"a\":");
  file.write("");
  file.write("1}\n");
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{
                              std::filesystem::path(tmp).filename().string()});
  file.commit();
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{"trace.json"});
  EXPECT_EQ(readFile(path, kTextFileLimit), "{\"a\":1}\n");
}

TEST(FileSink, WithoutCommitTheOldFileStaysAndNothingIsAdded) {
  std::string dir = test::makeTempDir();
  const std::string path = dir + "/trace.json";
  writeFileAtomic(path, "old");
  {
    FileSink file(path);
    file.write("half of a new");
  }
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{"trace.json"});
  EXPECT_EQ(readFile(path, kTextFileLimit), "old");
}

TEST(FileSink, SymlinkStaysALinkAndItsTargetGetsTheBytes) {
  std::string dir = test::makeTempDir();
  writeFileAtomic(dir + "/target.bin", "old");
  std::filesystem::create_symlink("target.bin", dir + "/link.bin");
  FileSink file(dir + "/link.bin");
  file.write("ne");
  file.write("w");
  file.commit();
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.bin"));
  EXPECT_EQ(readFile(dir + "/target.bin", kTextFileLimit), "new");
}

TEST(FileSink, UnwritablePathIsUserErrorNamingIt) {
  std::string dir = test::makeTempDir();
  const std::string path = dir + "/no/such/dir/trace.json";
  try {
    FileSink file(path);
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              path + ": error: cannot write file: No such file or directory");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(FileSink, WriteErrorMidwayIsUserErrorAndLeavesNoFile) {
  std::string dir = test::makeTempDir();
  const std::string path = dir + "/trace.json";
  const std::string piece(size_t{1} << 16, 'x');
  std::optional<std::string> message;
  {
    test::FileSizeLimit limit(size_t{1} << 18);
    try {
      writeFileStreamed(path, [&](ByteSink &out) {
        for (int i = 0; i < 64; ++i)
          out.write(piece);
      });
    } catch (const UserError &e) {
      message = e.diagnostic().str();
    }
  }
  EXPECT_EQ(message, path + ": error: cannot write file: File too large");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(FileSink, ADeviceIsWrittenInPlaceAndAFullOneIsAnError) {
  if (!std::filesystem::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  try {
    writeFileStreamed("/dev/full", [](ByteSink &out) {
      out.write(std::string(size_t{1} << 16, 'x'));
    });
    FAIL();
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              "/dev/full: error: cannot write file: No space left on device");
  }
}

TEST(WriteFileStreamed, AnErrorWhileTheBytesAreMadeLeavesNoFile) {
  std::string dir = test::makeTempDir();
  EXPECT_THROW(writeFileStreamed(dir + "/trace.json",
                                 [](ByteSink &out) {
                                   out.write("{\"traceEvents\":[");
                                   throw UserError(SourceLoc{"x"}, "failed");
                                 }),
               UserError);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(WriteFileStreamed, WritesThePiecesInOrder) {
  std::string dir = test::makeTempDir();
  writeFileStreamed(dir + "/f.txt", [](ByteSink &out) {
    for (int i = 0; i < 1000; ++i)
      out.write(std::to_string(i) + ",");
  });
  std::string expected;
  for (int i = 0; i < 1000; ++i)
    expected += std::to_string(i) + ",";
  EXPECT_EQ(readFile(dir + "/f.txt", kTextFileLimit), expected);
}
