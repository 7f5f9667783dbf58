// Safetensors files: the format Hugging Face checkpoints ship their weights
// in. A file is an 8-byte little-endian header length N, N bytes of JSON
//   {"NAME": {"dtype": "BF16", "shape": [out, in], "data_offsets": [b, e]},
//    ..., "__metadata__": {"format": "pt"}}
// and then the tensors' bytes, each at [b, e) counted from the end of the
// header, little-endian, C order.
//
// Files come from anywhere, so the reader trusts nothing in them: the header
// is at most kMaxSafetensorsHeaderBytes and nests at most
// kMaxSafetensorsDepth levels (support/Nesting.h), a key given twice is an
// error, and every tensor's dtype, shape and offsets are checked against
// each other and against the file before any data is read: its bytes are
// its element count times its dtype's size, it ends inside the file, and the
// tensors, ordered by offset, tile the data without overlap or gap and end
// where the file ends (as the safetensors library requires). Each failure is
// a UserError `file: error: tensor 'NAME': ...`. Only the dtypes a
// checkpoint of the device's models holds are read (F16, BF16, F32); any
// other is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace spyre {

enum class SafetensorsDtype { F16, BF16, F32 };

/// `F16`, `BF16`, `F32`, as the header spells them.
const char *safetensorsDtypeName(SafetensorsDtype dtype);
/// Bytes per element.
int safetensorsDtypeSize(SafetensorsDtype dtype);

/// The largest header read (the safetensors library's own limit: 100 MB;
/// a Granite-3.3-8B shard's header is about 20 KB).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
/// The deepest nesting of a header's JSON: the top object, a tensor's
/// entry and its shape are three levels.
inline constexpr int kMaxSafetensorsDepth = 4;

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape; ///< empty for a scalar
  /// Bytes [begin, end) of the data, which starts after the header.
  uint64_t begin = 0;
  uint64_t end = 0;

  int64_t elementCount() const;
};

struct SafetensorsHeader {
  std::string file;       ///< for messages, and where readSafetensorsData reads
  uint64_t dataStart = 0; ///< 8 + N: where the data starts in the file
  uint64_t dataBytes = 0; ///< the bytes after the header
  std::map<std::string, SafetensorsTensor> tensors;
  /// `__metadata__`: a string for each key.
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or nullptr.
  const SafetensorsTensor *find(const std::string &name) const;
};

/// Parses and checks the header's JSON `json` (its N bytes) of a file whose
/// data after the header is `dataBytes` long; `file` names it in messages.
SafetensorsHeader parseSafetensorsHeader(std::string_view json,
                                         uint64_t dataBytes,
                                         const std::string &file);

/// Parses and checks a whole file held in memory.
SafetensorsHeader parseSafetensors(std::string_view bytes,
                                   const std::string &file);

/// Reads and checks the header of the file `path` without reading its data.
/// A missing file, a directory, a device or pipe, or a bad header is a
/// UserError naming the path.
SafetensorsHeader readSafetensorsHeader(const std::string &path);

/// The bytes of `tensor`, read from the file `header.file`.
std::string readSafetensorsData(const SafetensorsHeader &header,
                                const SafetensorsTensor &tensor);

/// The bytes of `tensor` in a whole file held in memory (parseSafetensors).
std::string_view safetensorsData(const SafetensorsHeader &header,
                                 const SafetensorsTensor &tensor,
                                 std::string_view bytes);

/// The index of a checkpoint sharded into several files: the folder holds
/// `model.safetensors.index.json`,
///   {"metadata": {"total_size": ...}, "weight_map": {"NAME": "SHARD", ...}}
/// and the shards it names. A shard's name comes from the file, so it must
/// be a plain file name inside the folder: not empty, no `/` or `\`, no
/// `..`, no NUL; anything else is a UserError naming the tensor and the
/// name, before any path is made of it.
inline constexpr const char *kSafetensorsIndexName =
    "model.safetensors.index.json";
/// The file of an unsharded checkpoint in its folder.
inline constexpr const char *kSafetensorsFileName = "model.safetensors";
/// The largest index read, and its deepest nesting (an index nests two
/// levels; its metadata may add a few).
inline constexpr uint64_t kMaxSafetensorsIndexBytes = 64 << 20;
inline constexpr int kMaxSafetensorsIndexDepth = 8;

struct SafetensorsIndex {
  std::string file;
  /// Tensor name -> shard file name (checked plain).
  std::map<std::string, std::string> weightMap;
};

/// Parses and checks the text of an index; `file` names it in messages.
SafetensorsIndex parseSafetensorsIndex(std::string_view text,
                                       const std::string &file);

/// Reads and parses the index file `path`.
SafetensorsIndex readSafetensorsIndex(const std::string &path);

/// A tensor to write.
struct SafetensorsEntry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;
  std::string data; ///< little-endian elements, C order
};

/// A file of the tensors in their order (the header padded with spaces to a
/// multiple of 8 bytes, as the safetensors library writes it), with
/// `__metadata__` {"format": "pt"}.
std::string serializeSafetensors(const std::vector<SafetensorsEntry> &tensors);

} // namespace spyre
