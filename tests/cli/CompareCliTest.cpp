// `spyre compare`: element-wise check of a result against a reference.
#include "support/Npy.h"
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace spyre;
using spyre::test::runSpyre;

namespace {
std::string save(const std::string &dir, const std::string &name,
                 const std::vector<float> &v, const std::vector<int64_t> &shape) {
  std::string path = dir + "/" + name + ".npy";
  writeNpy(path, makeNpyF32(v, shape));
  return path;
}
} // namespace

TEST(CompareCli, WithinToleranceMatches) {
  std::string dir = test::makeTempDir();
  std::string a = save(dir, "a", {1.0f, 2.0f, 100.0f, 0.0f}, {2, 2});
  std::string b = save(dir, "b", {1.0005f, 2.0f, 100.5f, 0.0f}, {2, 2});
  auto r = runSpyre({"compare", a, b});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "4 elements, max |difference| 0.5, tolerance 0.001 + "
                   "0.00781 * |expected|\nmatch\n");
}

TEST(CompareCli, MismatchNamesTheWorstElementAndExitsThree) {
  std::string dir = test::makeTempDir();
  std::string a = save(dir, "a", {1.0f, 2.0f, 3.0f, 4.5f, 5.0f, 6.0f}, {2, 3});
  std::string b = save(dir, "b", {1.0f, 2.1f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  auto r = runSpyre({"compare", a, b});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_NE(r.out.find("MISMATCH: 2 of 6 elements outside the tolerance; worst "
                       "at [1, 0]: 4.5, expected 4"),
            std::string::npos)
      << r.out;
}

TEST(CompareCli, NanAgainstANumberIsAMismatch) {
  std::string dir = test::makeTempDir();
  std::string a = save(dir, "a", {1.0f, NAN}, {2});
  std::string b = save(dir, "b", {1.0f, 2.0f}, {2});
  auto r = runSpyre({"compare", a, b});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_NE(r.out.find("worst at [1]"), std::string::npos) << r.out;
}

TEST(CompareCli, ToleranceOptionsApply) {
  std::string dir = test::makeTempDir();
  std::string a = save(dir, "a", {1.0f, 2.2f}, {2});
  std::string b = save(dir, "b", {1.0f, 2.0f}, {2});
  EXPECT_EQ(runSpyre({"compare", a, b}).exitCode, 3);
  EXPECT_EQ(runSpyre({"compare", a, b, "--rtol", "0.2"}).exitCode, 0);
  EXPECT_EQ(runSpyre({"compare", a, b, "--atol", "-1"}).exitCode, 2);
}

TEST(CompareCli, ShapeMismatchAndMissingFileAreBadInput) {
  std::string dir = test::makeTempDir();
  std::string a = save(dir, "a", {1.0f, 2.0f}, {2});
  std::string b = save(dir, "b", {1.0f, 2.0f}, {1, 2});
  auto r = runSpyre({"compare", a, b});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(test::firstLine(r.err), a + ": error: shape [2] differs from [1, 2] of " + b);
  r = runSpyre({"compare", dir + "/none.npy", b});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(test::firstLine(r.err),
            dir + "/none.npy: error: cannot open file: No such file or directory");
}
