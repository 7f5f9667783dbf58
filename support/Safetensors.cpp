#include "support/Safetensors.h"

#include "support/CheckedMath.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/JsonKeys.h"
#include "support/Nesting.h"
#include "support/Npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

namespace spyre {

namespace {

using Json = nlohmann::json;

constexpr size_t kLengthBytes = 8;
/// Most dimensions of a tensor (checkpoints hold 1-D and 2-D ones).
constexpr size_t kMaxRank = 8;

constexpr const char *kMetadataKey = "__metadata__";

/// The dtypes the format defines that this reader does not read.
constexpr const char *kOtherDtypes[] = {
    "BOOL",    "U8",      "I8",      "U16",     "I16",    "U32",
    "I32",     "U64",     "I64",     "F64",     "C64",    "F4",
    "F6_E2M3", "F6_E3M2", "F8_E4M3", "F8_E5M2", "F8_E8M0"};

/// Thrown from the parser callback; turned into a located error.
struct DuplicateKey {
  std::string key;
};

[[noreturn]] void fail(const std::string &file, const std::string &message) {
  throw UserError(SourceLoc{file}, "invalid safetensors file: " + message);
}

[[noreturn]] void failTensor(const std::string &file, const std::string &name,
                             const std::string &message) {
  fail(file, "tensor '" + name + "': " + message);
}

std::string describe(const Json &j) {
  std::string text = j.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return std::string(j.type_name()) + " " + text;
}

/// Parses untrusted JSON: at most `maxDepth` levels deep (support/Nesting.h)
/// and no key twice in an object (nlohmann would keep the last).
Json parseJson(std::string_view text, const std::string &file, int maxDepth,
               const char *what, const std::string &prefix) {
  checkJsonDepth(text, file, maxDepth);
  JsonDuplicateKeys keys;
  Json::parser_callback_t duplicates = [&](int, Json::parse_event_t event,
                                           Json &parsed) {
    if (std::optional<std::string> twice = keys.see(event, parsed))
      throw DuplicateKey{*twice};
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), duplicates);
  } catch (const DuplicateKey &d) {
    throw UserError(SourceLoc{file}, prefix + "key '" + d.key +
                                         "' is given twice in the " + what);
  } catch (const Json::exception &e) {
    // nlohmann's messages start with "[json.exception.parse_error.101] ".
    const std::string message = e.what();
    const size_t at = message.find("] ");
    throw UserError(
        SourceLoc{file},
        prefix + "the " + what + " is not valid JSON: " +
            (at == std::string::npos ? message : message.substr(at + 2)));
  }
}

/// Why `name` is not a plain file name of the folder, or empty.
std::string notPlain(const std::string &name) {
  if (name.empty())
    return "is empty";
  if (name.find('/') != std::string::npos ||
      name.find('\\') != std::string::npos)
    return "holds a path separator";
  if (name == "." || name.find("..") != std::string::npos)
    return "is '.' or holds '..'";
  if (name.find('\0') != std::string::npos)
    return "holds a NUL byte";
  return "";
}

std::string rangeText(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

uint64_t readLength(std::string_view bytes) {
  uint64_t n = 0;
  for (size_t i = 0; i < kLengthBytes; ++i)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return n;
}

/// The header length of a file of `fileBytes` bytes whose first 8 are
/// `prefix`, checked against the limit and the file.
uint64_t headerLength(std::string_view prefix, uint64_t fileBytes,
                      const std::string &file) {
  if (prefix.size() < kLengthBytes)
    fail(file, "truncated: " + std::to_string(fileBytes) +
                   " bytes, fewer than the 8 of the header length");
  const uint64_t n = readLength(prefix);
  if (n > kMaxSafetensorsHeaderBytes)
    fail(file, "a header of " + std::to_string(n) + " bytes; at most " +
                   std::to_string(kMaxSafetensorsHeaderBytes) + " are read");
  if (n > fileBytes - kLengthBytes)
    fail(file, "truncated: the header length is " + std::to_string(n) +
                   " bytes but only " +
                   std::to_string(fileBytes - kLengthBytes) + " follow it");
  return n;
}

class HeaderReader {
public:
  HeaderReader(std::string file, uint64_t dataBytes)
      : file_(std::move(file)), dataBytes_(dataBytes) {}

  SafetensorsHeader read(std::string_view json) {
    const Json root = parse(json);
    if (!root.is_object())
      fail(file_, "the header holds one JSON object, got " +
                      std::string(root.type_name()));
    SafetensorsHeader h;
    h.file = file_;
    h.dataBytes = dataBytes_;
    for (const auto &[key, value] : root.items()) {
      if (key == kMetadataKey) {
        h.metadata = metadata(value);
        continue;
      }
      h.tensors.emplace(key, tensor(key, value));
    }
    checkLayout(h);
    return h;
  }

private:
  Json parse(std::string_view json) const {
    return parseJson(json, file_, kMaxSafetensorsDepth, "header",
                     "invalid safetensors file: ");
  }

  std::map<std::string, std::string> metadata(const Json &j) const {
    if (!j.is_object())
      fail(file_,
           "'__metadata__' must be an object of strings, got " + describe(j));
    std::map<std::string, std::string> out;
    for (const auto &[key, value] : j.items()) {
      if (!value.is_string())
        fail(file_, "'__metadata__' entry '" + key +
                        "' must be a string, got " + describe(value));
      out.emplace(key, value.get<std::string>());
    }
    return out;
  }

  SafetensorsTensor tensor(const std::string &name, const Json &j) const {
    if (!j.is_object())
      failTensor(file_, name,
                 "expected an object of dtype, shape and data_offsets, got " +
                     describe(j));
    for (const auto &[key, value] : j.items())
      if (key != "dtype" && key != "shape" && key != "data_offsets")
        failTensor(file_, name,
                   "unknown key '" + key +
                       "' (a tensor has dtype, shape and data_offsets)");
    SafetensorsTensor t;
    t.name = name;
    t.dtype = dtype(name, field(name, j, "dtype"));
    const Json &shape = field(name, j, "shape");
    if (!shape.is_array() || shape.size() > kMaxRank)
      failTensor(file_, name,
                 "shape must be a list of at most " + std::to_string(kMaxRank) +
                     " dimensions, got " + describe(shape));
    for (const Json &d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
        failTensor(file_, name,
                   "a dimension must be a non-negative integer, got " +
                       describe(d));
      t.shape.push_back(d.get<int64_t>());
    }
    std::optional<int64_t> bytes = safetensorsDtypeSize(t.dtype);
    for (int64_t d : t.shape)
      if (bytes)
        bytes = checkedMul(*bytes, d);
    if (!bytes)
      failTensor(file_, name,
                 "shape " + shapeText(t.shape) +
                     " has more bytes than any file holds");
    const Json &offsets = field(name, j, "data_offsets");
    if (!offsets.is_array() || offsets.size() != 2 ||
        !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      failTensor(file_, name,
                 "data_offsets must be two non-negative integers [begin, "
                 "end], got " +
                     describe(offsets));
    t.begin = offsets[0].get<uint64_t>();
    t.end = offsets[1].get<uint64_t>();
    const std::string range = rangeText(t.begin, t.end);
    if (t.end < t.begin)
      failTensor(file_, name,
                 "data_offsets " + range + " end before they begin");
    if (t.end - t.begin != static_cast<uint64_t>(*bytes))
      failTensor(file_, name,
                 "shape " + shapeText(t.shape) + " of " +
                     safetensorsDtypeName(t.dtype) + " is " +
                     std::to_string(*bytes) + " bytes, but data_offsets " +
                     range + " hold " + std::to_string(t.end - t.begin));
    if (t.end > dataBytes_)
      failTensor(file_, name,
                 "data_offsets " + range +
                     " end past the end of the file, whose data after the "
                     "header is " +
                     std::to_string(dataBytes_) + " bytes (truncated?)");
    return t;
  }

  const Json &field(const std::string &name, const Json &j,
                    const char *key) const {
    const auto it = j.find(key);
    if (it == j.end())
      failTensor(file_, name, std::string("has no '") + key + "'");
    return *it;
  }

  SafetensorsDtype dtype(const std::string &name, const Json &j) const {
    if (!j.is_string())
      failTensor(file_, name, "dtype must be a string, got " + describe(j));
    const std::string s = j.get<std::string>();
    for (SafetensorsDtype d :
         {SafetensorsDtype::F16, SafetensorsDtype::BF16, SafetensorsDtype::F32})
      if (s == safetensorsDtypeName(d))
        return d;
    const bool known =
        std::any_of(std::begin(kOtherDtypes), std::end(kOtherDtypes),
                    [&](const char *o) { return s == o; });
    failTensor(file_, name,
               (known ? "dtype " + s + " is not read"
                      : "unknown dtype '" + s.substr(0, 40) + "'") +
                   "; the dtypes read are F16, BF16 and F32");
  }

  /// The tensors, ordered by offset, tile the data: no byte is in two, none
  /// is in no tensor, the last ends where the file does.
  void checkLayout(const SafetensorsHeader &h) const {
    std::vector<const SafetensorsTensor *> order;
    for (const auto &[name, t] : h.tensors)
      order.push_back(&t);
    std::sort(order.begin(), order.end(),
              [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
                return a->begin != b->begin ? a->begin < b->begin
                                            : a->end < b->end;
              });
    uint64_t next = 0;
    const SafetensorsTensor *previous = nullptr;
    for (const SafetensorsTensor *t : order) {
      if (t->begin < next)
        failTensor(file_, t->name,
                   "data_offsets " + rangeText(t->begin, t->end) +
                       " overlap tensor '" + previous->name + "' " +
                       rangeText(previous->begin, previous->end));
      if (t->begin > next)
        failTensor(file_, t->name,
                   "data_offsets " + rangeText(t->begin, t->end) +
                       " leave bytes [" + std::to_string(next) + ", " +
                       std::to_string(t->begin) + ") of the data in no tensor");
      next = t->end;
      previous = t;
    }
    if (next != h.dataBytes)
      fail(file_, std::to_string(h.dataBytes - next) +
                      " bytes after the last tensor's data belong to no "
                      "tensor");
  }

  std::string file_;
  uint64_t dataBytes_;
};

struct FileCloser {
  void operator()(std::FILE *f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open(const std::string &path) {
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f)
    throw UserError(SourceLoc{path},
                    std::string("cannot open file: ") + std::strerror(errno));
  return f;
}

/// Reads `size` bytes at `offset` of `path`; a short read is an error.
std::string readAt(std::FILE *f, const std::string &path, uint64_t offset,
                   uint64_t size) {
  if (::fseeko(f, static_cast<off_t>(offset), SEEK_SET) != 0)
    throw UserError(SourceLoc{path},
                    std::string("cannot seek: ") + std::strerror(errno));
  std::string out(static_cast<size_t>(size), '\0');
  const size_t got = std::fread(out.data(), 1, out.size(), f);
  if (got != out.size())
    throw UserError(SourceLoc{path},
                    std::ferror(f)
                        ? std::string("read error: ") + std::strerror(errno)
                        : "the file ended early (truncated since "
                          "its header was read?)");
  return out;
}

} // namespace

const char *safetensorsDtypeName(SafetensorsDtype dtype) {
  switch (dtype) {
  case SafetensorsDtype::F16:
    return "F16";
  case SafetensorsDtype::BF16:
    return "BF16";
  case SafetensorsDtype::F32:
    return "F32";
  }
  SPYRE_UNREACHABLE("safetensors dtype");
}

int safetensorsDtypeSize(SafetensorsDtype dtype) {
  return dtype == SafetensorsDtype::F32 ? 4 : 2;
}

int64_t SafetensorsTensor::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const SafetensorsTensor *
SafetensorsHeader::find(const std::string &name) const {
  const auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

SafetensorsHeader parseSafetensorsHeader(std::string_view json,
                                         uint64_t dataBytes,
                                         const std::string &file) {
  SafetensorsHeader h = HeaderReader(file, dataBytes).read(json);
  h.dataStart = kLengthBytes + json.size();
  return h;
}

SafetensorsHeader parseSafetensors(std::string_view bytes,
                                   const std::string &file) {
  const uint64_t n = headerLength(bytes, bytes.size(), file);
  return parseSafetensorsHeader(bytes.substr(kLengthBytes, n),
                                bytes.size() - kLengthBytes - n, file);
}

SafetensorsHeader readSafetensorsHeader(const std::string &path) {
  const uint64_t size = *checkInputFile(path, kSafetensorsFileLimit);
  const FilePtr f = open(path);
  const std::string prefix =
      readAt(f.get(), path, 0, std::min<uint64_t>(size, kLengthBytes));
  const uint64_t n = headerLength(prefix, size, path);
  const std::string json = readAt(f.get(), path, kLengthBytes, n);
  return parseSafetensorsHeader(json, size - kLengthBytes - n, path);
}

std::string readSafetensorsData(const SafetensorsHeader &header,
                                const SafetensorsTensor &tensor) {
  SPYRE_ASSERT(tensor.end <= header.dataBytes, "a tensor past its file's data");
  const FilePtr f = open(header.file);
  return readAt(f.get(), header.file, header.dataStart + tensor.begin,
                tensor.end - tensor.begin);
}

std::string_view safetensorsData(const SafetensorsHeader &header,
                                 const SafetensorsTensor &tensor,
                                 std::string_view bytes) {
  SPYRE_ASSERT(header.dataStart + header.dataBytes == bytes.size() &&
                   tensor.end <= header.dataBytes,
               "a tensor outside the bytes its header was read from");
  return bytes.substr(header.dataStart + tensor.begin,
                      tensor.end - tensor.begin);
}

SafetensorsIndex parseSafetensorsIndex(std::string_view text,
                                       const std::string &file) {
  const std::string prefix = "invalid safetensors index: ";
  const Json root =
      parseJson(text, file, kMaxSafetensorsIndexDepth, "index", prefix);
  const auto map = root.is_object() ? root.find("weight_map") : root.end();
  if (!root.is_object() || map == root.end() || !map->is_object())
    throw UserError(SourceLoc{file},
                    prefix + "expected an object with a 'weight_map' "
                             "object of tensor name -> shard file");
  SafetensorsIndex index;
  index.file = file;
  for (const auto &[name, shard] : map->items()) {
    if (!shard.is_string())
      throw UserError(SourceLoc{file},
                      prefix + "tensor '" + name +
                          "': the shard must be a file name, got " +
                          describe(shard));
    const std::string shardName = shard.get<std::string>();
    const std::string why = notPlain(shardName);
    if (!why.empty())
      throw UserError(SourceLoc{file},
                      prefix + "tensor '" + name + "': shard '" +
                          shardName.substr(0, 200) + "' " + why +
                          "; a shard is a file name inside the index's folder");
    index.weightMap.emplace(name, shardName);
  }
  return index;
}

SafetensorsIndex readSafetensorsIndex(const std::string &path) {
  return parseSafetensorsIndex(
      readFile(path, FileLimit{kMaxSafetensorsIndexBytes, "a safetensors index",
                               true}),
      path);
}

std::string serializeSafetensors(const std::vector<SafetensorsEntry> &tensors) {
  Json header = Json::object();
  header[kMetadataKey] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const SafetensorsEntry &t : tensors) {
    header[t.name] = {{"dtype", safetensorsDtypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(kLengthBytes, '\0');
  for (size_t i = 0; i < kLengthBytes; ++i)
    out[i] = static_cast<char>((uint64_t(json.size()) >> (8 * i)) & 0xff);
  out += json;
  for (const SafetensorsEntry &t : tensors)
    out += t.data;
  return out;
}

} // namespace spyre
