// The safetensors reader: files it writes read back, the layout the
// safetensors library writes reads, and every malformed header is a UserError
// naming the file and the tensor, never a crash.
#include "support/Safetensors.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace spyre;

namespace {

/// A file of the header `json` and `data` bytes after it.
std::string fileOf(const std::string &json, const std::string &data = "") {
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i)
    out[i] = static_cast<char>((uint64_t(json.size()) >> (8 * i)) & 0xff);
  return out + json + data;
}

std::string errorOf(std::string_view bytes) {
  try {
    parseSafetensors(bytes, "w.safetensors");
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "(no error)";
}

std::string indexErrorOf(const std::string &text) {
  try {
    parseSafetensorsIndex(text, "d/model.safetensors.index.json");
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "(no error)";
}

std::string f32Bytes(const std::vector<float> &values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

} // namespace

TEST(Safetensors, WrittenFileReadsBack) {
  const std::vector<SafetensorsEntry> entries = {
      {"a.weight", SafetensorsDtype::F32, {2, 3}, f32Bytes({1, 2, 3, 4, 5, 6})},
      {"b",
       SafetensorsDtype::BF16,
       {4},
       std::string("\x80\x3f\x00\x40"
                   "\x40\x40\x80\x40",
                   8)},
      {"empty", SafetensorsDtype::F16, {0, 7}, ""}};
  const std::string bytes = serializeSafetensors(entries);
  const SafetensorsHeader h = parseSafetensors(bytes, "w.safetensors");
  EXPECT_EQ(h.dataStart % 8, 0u) << "the header is padded to 8 bytes";
  EXPECT_EQ(h.metadata.at("format"), "pt");
  ASSERT_EQ(h.tensors.size(), 3u);
  for (const SafetensorsEntry &e : entries) {
    const SafetensorsTensor *t = h.find(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_EQ(t->dtype, e.dtype);
    EXPECT_EQ(t->shape, e.shape);
    EXPECT_EQ(safetensorsData(h, *t, bytes), e.data);
  }
  EXPECT_EQ(h.find("c"), nullptr);

  const std::string path = test::makeTempDir() + "/w.safetensors";
  writeFileAtomic(path, bytes);
  const SafetensorsHeader fromFile = readSafetensorsHeader(path);
  EXPECT_EQ(fromFile.dataStart, h.dataStart);
  EXPECT_EQ(readSafetensorsData(fromFile, *fromFile.find("a.weight")),
            entries[0].data);
}

TEST(Safetensors, ReadsTheLibrarysLayout) {
  // As safetensors' save_file writes it: compact JSON, the metadata first,
  // tensors by dtype size then name, padded with spaces to 8 bytes.
  const std::string json =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"model.layers.0.mlp.up_proj.weight\":{\"dtype\":\"F32\","
      "\"shape\":[3,2],\"data_offsets\":[0,24]},"
      "\"model.norm.weight\":{\"dtype\":\"F16\",\"shape\":[4],"
      "\"data_offsets\":[24,32]},"
      "\"scalar\":{\"dtype\":\"BF16\",\"shape\":[],"
      "\"data_offsets\":[32,34]}}";
  const std::string padded = json + std::string((8 - json.size() % 8) % 8, ' ');
  const std::string bytes =
      fileOf(padded, f32Bytes({0, 0.5f, 1, 1.5f, 2, 2.5f}) +
                         std::string("\x00\x3c\x00\x40\x00\x42\x00\x44"
                                     "\x80\x3f",
                                     10));
  const SafetensorsHeader h = parseSafetensors(bytes, "w.safetensors");
  ASSERT_EQ(h.tensors.size(), 3u);
  const SafetensorsTensor &w = *h.find("model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(w.dtype, SafetensorsDtype::F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(safetensorsData(h, w, bytes),
            f32Bytes({0, 0.5f, 1, 1.5f, 2, 2.5f}));
  EXPECT_EQ(h.find("model.norm.weight")->dtype, SafetensorsDtype::F16);
  EXPECT_EQ(h.find("scalar")->shape, std::vector<int64_t>{});
  EXPECT_EQ(h.find("scalar")->elementCount(), 1);
}

TEST(Safetensors, RefusesATruncatedOrOversizedHeader) {
  EXPECT_EQ(errorOf(std::string("\x10\x00\x00", 3)),
            "w.safetensors: error: invalid safetensors file: truncated: 3 "
            "bytes, fewer than the 8 of the header length");
  EXPECT_EQ(errorOf(fileOf("{}").substr(0, 9)),
            "w.safetensors: error: invalid safetensors file: truncated: the "
            "header length is 2 bytes but only 1 follow it");
  std::string huge(8, '\0');
  huge[4] = 1; // 2^32 bytes
  EXPECT_EQ(errorOf(huge + "{}"),
            "w.safetensors: error: invalid safetensors file: a header of "
            "4294967296 bytes; at most 100000000 are read");
  std::string allOnes(8, '\xff');
  EXPECT_NE(errorOf(allOnes).find("a header of 18446744073709551615 bytes"),
            std::string::npos);
}

TEST(Safetensors, RefusesBadJson) {
  EXPECT_EQ(
      errorOf(fileOf("{\"a\": "))
          .find("w.safetensors: error: invalid safetensors file: the header "
                "is not valid JSON"),
      0u);
  EXPECT_EQ(errorOf(fileOf("[1]")),
            "w.safetensors: error: invalid safetensors file: the header "
            "holds one JSON object, got array");
  // Deeper than a header ever nests: refused before a tree is built.
  EXPECT_NE(
      errorOf(fileOf(std::string(100000, '[') + std::string(100000, ']')))
          .find("w.safetensors:1:5: error: JSON nests deeper than 4 levels"),
      std::string::npos);
  EXPECT_EQ(errorOf(fileOf("{\"a\": {\"dtype\": \"F32\", \"shape\": [], "
                           "\"data_offsets\": [0, 4]}, \"a\": {}}",
                           "abcd")),
            "w.safetensors: error: invalid safetensors file: key 'a' is "
            "given twice in the header");
  EXPECT_EQ(errorOf(fileOf("{\"__metadata__\": {\"n\": 3}}")),
            "w.safetensors: error: invalid safetensors file: '__metadata__' "
            "entry 'n' must be a string, got number 3");
}

TEST(Safetensors, RefusesBadTensorEntries) {
  auto entry = [](const std::string &fields, const std::string &data = "") {
    return errorOf(fileOf("{\"t\": {" + fields + "}}", data));
  };
  const std::string at = "w.safetensors: error: invalid safetensors file: "
                         "tensor 't': ";
  EXPECT_EQ(entry("\"dtype\": \"I64\", \"shape\": [1], \"data_offsets\": "
                  "[0, 8]",
                  "12345678"),
            at + "dtype I64 is not read; the dtypes read are F16, BF16 and "
                 "F32");
  EXPECT_EQ(entry("\"dtype\": \"Q4\", \"shape\": [1], \"data_offsets\": "
                  "[0, 1]",
                  "1"),
            at + "unknown dtype 'Q4'; the dtypes read are F16, BF16 and F32");
  EXPECT_EQ(entry("\"shape\": [1], \"data_offsets\": [0, 4]", "1234"),
            at + "has no 'dtype'");
  EXPECT_EQ(entry("\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": "
                  "[0, 4], \"extra\": 1",
                  "1234"),
            at + "unknown key 'extra' (a tensor has dtype, shape and "
                 "data_offsets)");
  EXPECT_EQ(entry("\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": "
                  "[0, 4]",
                  "1234"),
            at + "a dimension must be a non-negative integer, got number -1");
  // The shape's bytes must be what the offsets hold.
  EXPECT_EQ(entry("\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": "
                  "[0, 20]",
                  std::string(20, 'x')),
            at + "shape [2, 3] of F32 is 24 bytes, but data_offsets [0, 20] "
                 "hold 20");
  // A product that wraps int64 is no shape.
  EXPECT_EQ(entry("\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], "
                  "\"data_offsets\": [0, 0]"),
            at + "shape [4294967296, 4294967296] has more bytes than any "
                 "file holds");
  EXPECT_EQ(entry("\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": "
                  "[4, 0]"),
            at + "data_offsets [4, 0] end before they begin");
  EXPECT_EQ(entry("\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": "
                  "[0]"),
            at + "data_offsets must be two non-negative integers [begin, "
                 "end], got array [0]");
}

TEST(Safetensors, RefusesOffsetsPastTheEndOverlapsAndGaps) {
  const std::string at = "w.safetensors: error: invalid safetensors file: ";
  // A truncated download: the last tensor ends past the file.
  EXPECT_EQ(errorOf(fileOf("{\"t\": {\"dtype\": \"F32\", \"shape\": [2], "
                           "\"data_offsets\": [0, 8]}}",
                           "1234")),
            at + "tensor 't': data_offsets [0, 8] end past the end of the "
                 "file, whose data after the header is 4 bytes (truncated?)");
  // Offsets near 2^64 do not wrap.
  EXPECT_EQ(errorOf(fileOf("{\"t\": {\"dtype\": \"F32\", \"shape\": [1], "
                           "\"data_offsets\": [18446744073709551612, "
                           "18446744073709551615]}}"))
                .find(at + "tensor 't': shape [1] of F32 is 4 bytes, but"),
            0u);
  EXPECT_EQ(errorOf(fileOf("{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                           "\"data_offsets\": [0, 8]}, \"b\": {\"dtype\": "
                           "\"F32\", \"shape\": [1], \"data_offsets\": [4, "
                           "8]}}",
                           "12345678")),
            at + "tensor 'b': data_offsets [4, 8] overlap tensor 'a' [0, 8]");
  EXPECT_EQ(errorOf(fileOf("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], "
                           "\"data_offsets\": [4, 8]}}",
                           "12345678")),
            at + "tensor 'a': data_offsets [4, 8] leave bytes [0, 4) of the "
                 "data in no tensor");
  EXPECT_EQ(errorOf(fileOf("{\"a\": {\"dtype\": \"F32\", \"shape\": [1], "
                           "\"data_offsets\": [0, 4]}}",
                           "12345678")),
            at + "4 bytes after the last tensor's data belong to no tensor");
  // Out of order in the header but tiling the data is a valid file.
  EXPECT_EQ(errorOf(fileOf("{\"b\": {\"dtype\": \"F32\", \"shape\": [1], "
                           "\"data_offsets\": [4, 8]}, \"a\": {\"dtype\": "
                           "\"F32\", \"shape\": [1], \"data_offsets\": [0, "
                           "4]}}",
                           "12345678")),
            "(no error)");
}

TEST(Safetensors, ReadingAFileNamesIt) {
  const std::string dir = test::makeTempDir();
  try {
    readSafetensorsHeader(dir);
    FAIL() << "a folder read as a file";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              dir + ": error: is a directory, expected a file");
  }
  writeFileAtomic(dir + "/short.safetensors", "abc");
  try {
    readSafetensorsHeader(dir + "/short.safetensors");
    FAIL() << "a truncated file read";
  } catch (const UserError &e) {
    EXPECT_EQ(e.diagnostic().str(),
              dir + "/short.safetensors: error: invalid safetensors file: "
                    "truncated: 3 bytes, fewer than the 8 of the header "
                    "length");
  }
}

TEST(Safetensors, IndexNamesPlainShardFiles) {
  const SafetensorsIndex index = parseSafetensorsIndex(
      "{\"metadata\": {\"total_size\": 16}, \"weight_map\": {\"a\": "
      "\"model-00001-of-00002.safetensors\", \"b\": "
      "\"model-00002-of-00002.safetensors\"}}",
      "i.json");
  EXPECT_EQ(index.weightMap.at("b"), "model-00002-of-00002.safetensors");

  const std::string at =
      "d/model.safetensors.index.json: error: invalid safetensors index: ";
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": \"../secret\"}}"),
            at + "tensor 'a': shard '../secret' holds a path separator; a "
                 "shard is a file name inside the index's folder");
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": \"/etc/passwd\"}}"),
            at + "tensor 'a': shard '/etc/passwd' holds a path separator; a "
                 "shard is a file name inside the index's folder");
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": \"..\"}}"),
            at + "tensor 'a': shard '..' is '.' or holds '..'; a shard is a "
                 "file name inside the index's folder");
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": \"x\\\\..\\\\y\"}}"),
            at + "tensor 'a': shard 'x\\..\\y' holds a path separator; a "
                 "shard is a file name inside the index's folder");
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": \"\"}}"),
            at + "tensor 'a': shard '' is empty; a shard is a file name "
                 "inside the index's folder");
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": 3}}"),
            at + "tensor 'a': the shard must be a file name, got number 3");
  EXPECT_EQ(indexErrorOf("{\"metadata\": {}}"),
            at + "expected an object with a 'weight_map' object of tensor "
                 "name -> shard file");
  EXPECT_EQ(indexErrorOf("{\"weight_map\": {\"a\": \"x\", \"a\": \"y\"}}"),
            at + "key 'a' is given twice in the index");
}
