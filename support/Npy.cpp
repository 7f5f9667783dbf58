#include "support/Npy.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <cstring>
#include <limits>

namespace spyre {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

[[noreturn]] void fail(const std::string &fileName, const std::string &msg) {
  throw UserError(SourceLoc{fileName}, "invalid .npy file: " + msg);
}

/// A tiny reader for the Python-literal dict in the header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 100), }
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string &fileName)
      : text_(text), fileName_(fileName) {}

  void parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool sawDescr = false, sawFortran = false, sawShape = false;
    skipSpace();
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = parseString();
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        descr = parseString();
        sawDescr = true;
      } else if (key == "fortran_order") {
        fortran = parseBool();
        sawFortran = true;
      } else if (key == "shape") {
        shape = parseShape();
        sawShape = true;
      } else {
        fail(fileName_, "unexpected header key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skipSpace();
      if (peek() != '}')
        fail(fileName_, "malformed header dictionary");
    }
    if (!sawDescr || !sawFortran || !sawShape)
      fail(fileName_, "header lacks 'descr', 'fortran_order' or 'shape'");
  }

private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
      ++pos_;
  }
  void expect(char c) {
    if (peek() != c)
      fail(fileName_, std::string("malformed header: expected '") + c + "'");
    ++pos_;
  }
  std::string parseString() {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail(fileName_, "malformed header: expected a string");
    ++pos_;
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos)
      fail(fileName_, "malformed header: unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool parseBool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(fileName_, "malformed header: 'fortran_order' is not True or False");
  }
  std::vector<int64_t> parseShape() {
    std::vector<int64_t> shape;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++pos_;
        return shape;
      }
      if (peek() < '0' || peek() > '9')
        fail(fileName_, "malformed header: shape entries must be integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
          fail(fileName_, "shape entry too large");
        v = v * 10 + (peek() - '0');
        ++pos_;
      }
      shape.push_back(v);
      skipSpace();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        fail(fileName_, "malformed header: bad shape tuple");
    }
  }

  std::string_view text_;
  const std::string &fileName_;
  size_t pos_ = 0;
};

/// `descr`'s dtype; `wide` is set for int64, which is read as int32.
NpyDtype parseDescr(const std::string &descr, const std::string &fileName,
                    bool &wide) {
  wide = false;
  if (descr.size() < 3)
    fail(fileName, "unsupported dtype '" + descr + "'");
  char order = descr[0];
  std::string kind = descr.substr(1);
  bool oneByte = kind == "i1";
  if (!oneByte && order != '<' && !(order == '=' || order == '|'))
    fail(fileName, "big-endian dtype '" + descr +
                       "' is not supported; save with a little-endian dtype");
  if (kind == "f4")
    return NpyDtype::F32;
  if (kind == "f2")
    return NpyDtype::F16;
  if (kind == "i1")
    return NpyDtype::I8;
  if (kind == "i4")
    return NpyDtype::I32;
  if (kind == "i8") {
    wide = true;
    return NpyDtype::I32;
  }
  fail(fileName, "unsupported dtype '" + descr +
                     "' (supported: float32, float16, int8, int32, and int64 "
                     "whose values fit in int32)");
}

const char *descrOf(NpyDtype d) {
  switch (d) {
  case NpyDtype::F32:
    return "<f4";
  case NpyDtype::F16:
    return "<f2";
  case NpyDtype::I8:
    return "|i1";
  case NpyDtype::I32:
    return "<i4";
  }
  SPYRE_UNREACHABLE("bad NpyDtype");
}

} // namespace

const char *npyDtypeName(NpyDtype dtype) {
  switch (dtype) {
  case NpyDtype::F32:
    return "float32";
  case NpyDtype::F16:
    return "float16";
  case NpyDtype::I8:
    return "int8";
  case NpyDtype::I32:
    return "int32";
  }
  SPYRE_UNREACHABLE("bad NpyDtype");
}

int npyDtypeSize(NpyDtype dtype) {
  switch (dtype) {
  case NpyDtype::F32:
  case NpyDtype::I32:
    return 4;
  case NpyDtype::F16:
    return 2;
  case NpyDtype::I8:
    return 1;
  }
  SPYRE_UNREACHABLE("bad NpyDtype");
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

int64_t NpyArray::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

NpyArray parseNpy(std::string_view bytes, const std::string &fileName) {
  if (bytes.size() < kMagicSize + 4 ||
      std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(fileName, "missing the \\x93NUMPY magic (not a .npy file)");
  auto major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen = 0, headerStart = 0;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) |
                (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      fail(fileName, "truncated header");
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    fail(fileName, "unsupported format version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLen)
    fail(fileName, "truncated header");
  std::string descr;
  bool fortran = false;
  NpyArray arr;
  HeaderParser(bytes.substr(headerStart, headerLen), fileName)
      .parse(descr, fortran, arr.shape);
  if (fortran)
    fail(fileName, "Fortran-ordered arrays are not supported; save a C-ordered "
                   "array (numpy.ascontiguousarray)");
  bool wide = false;
  arr.dtype = parseDescr(descr, fileName, wide);

  // Check the declared size against the bytes present without overflowing.
  // The product of the nonzero dims must fit in int64 even when a zero dim
  // makes the array empty: elementCount() multiplies the dims in order.
  uint64_t nonzero = 1;
  bool hasZero = false;
  for (int64_t d : arr.shape) {
    if (d == 0) {
      hasZero = true;
      continue;
    }
    if (nonzero > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                      static_cast<uint64_t>(d))
      fail(fileName, "declared shape is too large");
    nonzero *= static_cast<uint64_t>(d);
  }
  uint64_t count = hasZero ? 0 : nonzero;
  size_t dataStart = headerStart + headerLen;
  uint64_t available = bytes.size() - dataStart;
  auto elemSize = wide ? uint64_t{8}
                      : static_cast<uint64_t>(npyDtypeSize(arr.dtype));
  if (count > available / elemSize || count * elemSize != available)
    fail(fileName, "data size " + std::to_string(available) +
                       " bytes does not match shape and dtype (" +
                       std::to_string(count) + " x " +
                       std::to_string(elemSize) + " bytes)");
  if (!wide) {
    arr.data.assign(bytes.substr(dataStart));
    return arr;
  }
  // int64 (as NumPy saves ids and positions by default) is held as int32:
  // each value must fit.
  arr.data.resize(static_cast<size_t>(count) * 4);
  for (uint64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    std::memcpy(&v, bytes.data() + dataStart + i * 8, 8);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      fail(fileName, "int64 element " + std::to_string(i) + " is " +
                         std::to_string(v) +
                         ", outside int32, which int64 arrays are read as");
    const auto narrow = static_cast<int32_t>(v);
    std::memcpy(arr.data.data() + i * 4, &narrow, 4);
  }
  return arr;
}

NpyArray readNpy(const std::string &path) {
  return parseNpy(readFile(path, kNpyFileLimit), path);
}

std::string serializeNpy(const NpyArray &array) {
  // numpy's tuple spelling: (), (3,), (3, 100).
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    if (i > 0)
      shape += ", ";
    shape += std::to_string(array.shape[i]);
  }
  if (array.shape.size() == 1)
    shape += ",";
  shape += ")";
  std::string header = std::string("{'descr': '") + descrOf(array.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads the header with spaces so the data starts 64-byte aligned.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out += array.data;
  return out;
}

void writeNpy(const std::string &path, const NpyArray &array) {
  writeFileAtomic(path, serializeNpy(array));
}

NpyArray makeNpyF32(const std::vector<float> &values,
                    const std::vector<int64_t> &shape) {
  NpyArray arr;
  arr.dtype = NpyDtype::F32;
  arr.shape = shape;
  SPYRE_ASSERT(arr.elementCount() == static_cast<int64_t>(values.size()),
               "makeNpyF32: shape does not match the value count");
  arr.data.resize(values.size() * sizeof(float));
  // memcpy with the null pointer of an empty vector is undefined even for 0 bytes.
  if (!values.empty())
    std::memcpy(arr.data.data(), values.data(), arr.data.size());
  return arr;
}

std::vector<float> npyF32Values(const NpyArray &array,
                                const std::string &fileName) {
  if (array.dtype != NpyDtype::F32)
    throw UserError(SourceLoc{fileName}, std::string("expected float32, got ") +
                                             npyDtypeName(array.dtype));
  std::vector<float> v(array.data.size() / sizeof(float));
  if (!v.empty())
    std::memcpy(v.data(), array.data.data(), v.size() * sizeof(float));
  return v;
}

} // namespace spyre
