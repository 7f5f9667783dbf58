// .npy reading and writing against files written by numpy.save
// (tests/data/npy/, made with numpy 1.24 on Debian 12).
#include "support/Npy.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace spyre;

namespace {
std::string fixture(const std::string &name) {
  return test::srcPath("tests/data/npy/" + name);
}

std::string errorOf(std::string_view bytes, const std::string &name = "t.npy") {
  try {
    parseNpy(bytes, name);
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "(no error)";
}
} // namespace

TEST(Npy, ReadsFloat32Matrix) {
  NpyArray a = readNpy(fixture("f32_3x100.npy"));
  EXPECT_EQ(a.dtype, NpyDtype::F32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 100}));
  std::vector<float> v = npyF32Values(a, "x");
  ASSERT_EQ(v.size(), 300u);
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(v[i], static_cast<float>(i) * 0.25f - 7.0f) << i;
}

TEST(Npy, ReadsFloat16Int8AndScalar) {
  NpyArray h = readNpy(fixture("f16_5.npy"));
  EXPECT_EQ(h.dtype, NpyDtype::F16);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{5}));
  uint16_t first = 0;
  std::memcpy(&first, h.data.data(), 2);
  EXPECT_EQ(first, 0x3800); // 0.5 in binary16

  NpyArray b = readNpy(fixture("i8_2x2x2.npy"));
  EXPECT_EQ(b.dtype, NpyDtype::I8);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(static_cast<int8_t>(b.data[3]), -128);

  NpyArray s = readNpy(fixture("i32_scalar.npy"));
  EXPECT_TRUE(s.shape.empty());
  int32_t v = 0;
  std::memcpy(&v, s.data.data(), 4);
  EXPECT_EQ(v, -123456);
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  for (const char *name : {"f32_3x100.npy", "f16_5.npy", "i8_2x2x2.npy",
                           "i32_scalar.npy", "f32_empty_0x4.npy"}) {
    std::string bytes = readFile(fixture(name), kTextFileLimit);
    EXPECT_EQ(serializeNpy(parseNpy(bytes, name)), bytes) << name;
  }
}

TEST(Npy, RejectsUnsupportedDtypeNamingIt) {
  EXPECT_EQ(errorOf(readFile(fixture("f64_2.npy"), kTextFileLimit), "f64_2.npy"),
            "f64_2.npy: error: invalid .npy file: unsupported dtype '<f8' "
            "(supported: float32, float16, int8, int32, and int64 whose values "
            "fit in int32)");
}

/// `values` as NumPy saves an int64 array of that shape.
std::string int64Npy(const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &values) {
  NpyArray header;
  header.dtype = NpyDtype::I32;
  header.shape = shape;
  header.data.assign(values.size() * 4, '\0');
  std::string bytes = serializeNpy(header);
  bytes.resize(bytes.size() - header.data.size());
  const size_t at = bytes.find("<i4");
  bytes.replace(at, 3, "<i8");
  for (int64_t v : values)
    bytes.append(reinterpret_cast<const char *>(&v), 8);
  return bytes;
}

TEST(Npy, ReadsInt64AsInt32WhenEveryValueFits) {
  // NumPy saves ids and positions as int64 by default.
  NpyArray a = parseNpy(int64Npy({2, 2}, {0, 7, -3, 2147483647}), "ids.npy");
  EXPECT_EQ(a.dtype, NpyDtype::I32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  std::vector<int32_t> got(4);
  ASSERT_EQ(a.data.size(), 16u);
  std::memcpy(got.data(), a.data.data(), 16);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 7, -3, 2147483647}));

  EXPECT_EQ(errorOf(int64Npy({3}, {1, 2147483648, 5}), "ids.npy"),
            "ids.npy: error: invalid .npy file: int64 element 1 is "
            "2147483648, outside int32, which int64 arrays are read as");
  // The data size is checked at 8 bytes per element.
  std::string cut = int64Npy({3}, {1, 2, 3});
  cut.resize(cut.size() - 4);
  EXPECT_NE(errorOf(cut).find("does not match shape and dtype (3 x 8 bytes)"),
            std::string::npos);
}

TEST(Npy, RejectsFortranOrderAndBigEndian) {
  EXPECT_NE(errorOf(readFile(fixture("f32_fortran.npy"), kTextFileLimit)).find("Fortran-ordered"),
            std::string::npos);
  EXPECT_NE(errorOf(readFile(fixture("f32_bigendian.npy"), kTextFileLimit)).find("big-endian"),
            std::string::npos);
}

TEST(Npy, RejectsTruncatedAndForeignFiles) {
  std::string good = readFile(fixture("f32_3x100.npy"), kTextFileLimit);
  EXPECT_EQ(errorOf(""),
            "t.npy: error: invalid .npy file: missing the \\x93NUMPY magic (not "
            "a .npy file)");
  EXPECT_EQ(errorOf("hello world, not numpy"),
            "t.npy: error: invalid .npy file: missing the \\x93NUMPY magic (not "
            "a .npy file)");
  EXPECT_EQ(errorOf(good.substr(0, 40)),
            "t.npy: error: invalid .npy file: truncated header");
  EXPECT_EQ(errorOf(good.substr(0, good.size() - 1)),
            "t.npy: error: invalid .npy file: data size 1199 bytes does not "
            "match shape and dtype (300 x 4 bytes)");
}

TEST(Npy, HugeDeclaredShapeIsRejectedWithoutAllocating) {
  std::string bytes = readFile(fixture("f32_empty_0x4.npy"), kTextFileLimit);
  size_t pos = bytes.find("(0, 4)");
  ASSERT_NE(pos, std::string::npos);
  bytes.replace(pos, 6, "(999999999999, 99999999999)");
  EXPECT_NE(errorOf(bytes).find("declared shape is too large"), std::string::npos)
      << errorOf(bytes);
}

// A zero dim makes the array empty, but the other dims must still multiply
// within int64 (found by the `npy` fuzz target: elementCount() overflowed).
TEST(Npy, HugeShapeWithAZeroDimIsRejected) {
  NpyArray huge;
  huge.shape = {0, 4000000000, 4000000000};
  EXPECT_EQ(errorOf(serializeNpy(huge)),
            "t.npy: error: invalid .npy file: declared shape is too large");
  NpyArray fits;
  fits.shape = {0, 4000000000, 2};
  EXPECT_EQ(errorOf(serializeNpy(fits)), "(no error)");
}

// An empty array has no element storage: its values are an empty list (the
// sanitizer build checks that no null pointer reaches memcpy on the way).
TEST(Npy, EmptyFloat32ArrayHasNoValues) {
  NpyArray a = readNpy(fixture("f32_empty_0x4.npy"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(npyF32Values(a, "x").empty());
  NpyArray made = makeNpyF32({}, {0, 4});
  EXPECT_TRUE(made.data.empty());
  EXPECT_EQ(serializeNpy(made), serializeNpy(a));
}
