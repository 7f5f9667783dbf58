// Tensor layouts, stream checks, and the program file writer and reader.
//
// The reader trusts nothing: every count and length is checked against the
// bytes that remain before anything is allocated, so a corrupted or hostile
// file ends in a UserError naming the file, never in a crash or a huge
// allocation. The byte layout is documented in docs/program-file.md.
#include "isa/Program.h"

#include "host/HostOp.h"
#include "hw/HwConfig.h"
#include "isa/InstrTable.h"

#include "support/Diagnostic.h"
#include "support/Hash.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

namespace spyre::isa {

namespace {

constexpr char kMagic[8] = {'S', 'P', 'Y', 'R', 'E', 'P', 'R', 'G'};
// Header offsets: magic 0, version 8, header size 12, fingerprint 16,
// payload size 24, CRC 32, flags 36, reserved 40.
constexpr size_t kCrcOffset = 32;
constexpr int kMaxRank = 8;
// Bounds that keep all size arithmetic far from overflow: 2^40 elements per
// dim, 2^48 elements and sticks per tensor.
constexpr uint64_t kMaxDim = uint64_t(1) << 40;
constexpr uint64_t kMaxElements = uint64_t(1) << 48;

constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 |
         uint32_t(uint8_t(s[2])) << 16 | uint32_t(uint8_t(s[3])) << 24;
}
constexpr uint32_t kTagName = tag("NAME");
constexpr uint32_t kTagStrings = tag("STRS");
constexpr uint32_t kTagTensors = tag("TENS");
constexpr uint32_t kTagStreams = tag("STRM");
constexpr uint32_t kTagProvenance = tag("PROV");
constexpr uint32_t kTagHost = tag("HOST");
/// Bounds of a HOST record, far above what any model has.
constexpr uint32_t kMaxHostOperands = 1024;

std::string tagText(uint32_t t) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    char c = static_cast<char>((t >> (8 * i)) & 0xFF);
    if (c < 0x20 || c > 0x7E)
      return "0x" + toHex(t, 8);
    s += c;
  }
  return s;
}

class ByteWriter {
public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void bytes(const void *p, size_t n) {
    out_.append(static_cast<const char *>(p), n);
  }
  void str(std::string_view s) { out_.append(s); }
  std::string &out() { return out_; }

private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  std::string out_;
};

/// Bounds-checked little-endian reads from one section of a file.
class ByteReader {
public:
  ByteReader(std::string_view bytes, std::string fileName, std::string where)
      : bytes_(bytes), file_(std::move(fileName)), where_(std::move(where)) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }

  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  std::string_view take(uint64_t n) {
    need(n);
    std::string_view s = bytes_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  /// Rejects a count whose elements (at least `minBytes` each) cannot fit in
  /// what is left, before anything is allocated for them.
  void checkCount(uint64_t count, uint64_t minBytes, std::string_view what) {
    if (minBytes > 0 && count > remaining() / minBytes)
      fail(std::string(what) + " count " + std::to_string(count) +
           " does not fit in the " + std::to_string(remaining()) +
           " bytes left");
  }
  void expectEnd() {
    if (remaining() != 0)
      fail(std::to_string(remaining()) + " unexpected bytes at the end");
  }
  [[noreturn]] void fail(const std::string &msg) const {
    throw UserError(SourceLoc{file_}, where_ + ": " + msg);
  }

private:
  void need(uint64_t n) const {
    if (n > remaining())
      fail("truncated at byte " + std::to_string(pos_) + " (needs " +
           std::to_string(n) + " more bytes, " + std::to_string(remaining()) +
           " left)");
  }
  uint64_t le(int n) {
    need(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= uint64_t(static_cast<uint8_t>(bytes_[pos_ + static_cast<size_t>(i)]))
           << (8 * i);
    pos_ += static_cast<size_t>(n);
    return v;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  std::string file_;
  std::string where_;
};

uint64_t loadLe(std::string_view bytes, size_t offset, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v |= uint64_t(static_cast<uint8_t>(bytes[offset + static_cast<size_t>(i)]))
         << (8 * i);
  return v;
}

/// CRC-32 of the header with its CRC field taken as zero, then the payload:
/// every byte of the file is covered, the fingerprint and version included.
uint32_t fileCrc(std::string_view file) {
  std::string copy(file);
  std::memset(copy.data() + kCrcOffset, 0, 4);
  return crc32(copy.data(), copy.size());
}

/// Indices of the source ops in first-use order over the streams (already
/// in file order): the canonical string table order.
std::vector<uint32_t> canonicalOrder(const std::vector<const Stream *> &streams,
                                     size_t stringCount) {
  std::vector<uint32_t> order;
  std::vector<bool> seen(stringCount, false);
  for (const Stream *s : streams)
    for (uint32_t p : s->provenance) {
      SPYRE_ASSERT(p == kNoProvenance || p < stringCount,
                   "provenance index outside the string table in stream " +
                       s->name());
      if (p != kNoProvenance && !seen[p]) {
        seen[p] = true;
        order.push_back(p);
      }
    }
  return order;
}

} // namespace

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::Dl16:
    return "dl16";
  case DType::Fp32:
    return "fp32";
  case DType::Int8:
    return "int8";
  case DType::Int32:
    return "int32";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtypeName(static_cast<DType>(i)) == name)
      return static_cast<DType>(i);
  return std::nullopt;
}

int dtypeBytes(DType t) {
  switch (t) {
  case DType::Dl16:
    return 2;
  case DType::Fp32:
  case DType::Int32:
    return 4;
  case DType::Int8:
    return 1;
  }
  return 1;
}

int lanesPerStick(DType t) { return kStickBytes / dtypeBytes(t); }

std::string_view tensorKindName(TensorKind k) {
  switch (k) {
  case TensorKind::Input:
    return "input";
  case TensorKind::Output:
    return "output";
  case TensorKind::Const:
    return "const";
  case TensorKind::Scratch:
    return "scratch";
  }
  return "?";
}

std::string tensorNameProblem(std::string_view name, TensorKind kind) {
  if (name.empty())
    return "the name is empty";
  if (hasControlChar(name))
    return "the name holds a control character";
  if (kind != TensorKind::Input && kind != TensorKind::Output)
    return "";
  const std::string why =
      " (inputs and outputs are read and written as files NAME.npy)";
  if (name == "." || name == "..")
    return "'" + std::string(name) + "' is not a plain file name" + why;
  if (name.find('/') != std::string_view::npos)
    return "the name holds '/', so it is not a plain file name" + why;
  if (name.size() > kMaxTensorNameBytes)
    return "the name is " + std::to_string(name.size()) +
           " bytes long, more than the " +
           std::to_string(kMaxTensorNameBytes) + " of a file name" + why;
  return "";
}

bool hasControlChar(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

std::string printableName(std::string_view name) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
      continue;
    }
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::optional<TensorKind> parseTensorKind(std::string_view name) {
  for (int i = 0; i < kNumTensorKinds; ++i)
    if (tensorKindName(static_cast<TensorKind>(i)) == name)
      return static_cast<TensorKind>(i);
  return std::nullopt;
}

std::vector<int64_t> deviceShapeOf(const std::vector<int64_t> &hostShape,
                                   DType dtype) {
  SPYRE_ASSERT(!hostShape.empty(), "a tensor has at least one dim");
  int64_t lanes = lanesPerStick(dtype);
  int64_t last = hostShape.back();
  std::vector<int64_t> dev;
  dev.push_back((last + lanes - 1) / lanes);
  dev.insert(dev.end(), hostShape.begin(), hostShape.end() - 1);
  dev.push_back(lanes);
  return dev;
}

uint64_t sticksOf(const std::vector<int64_t> &deviceShape) {
  uint64_t n = 1;
  for (size_t i = 0; i + 1 < deviceShape.size(); ++i)
    n *= static_cast<uint64_t>(deviceShape[i]);
  return n;
}

uint64_t elementCount(const std::vector<int64_t> &hostShape) {
  uint64_t n = 1;
  for (int64_t d : hostShape)
    n *= static_cast<uint64_t>(d);
  return n;
}

uint64_t deviceByteOffset(const std::vector<int64_t> &hostShape, DType dtype,
                          uint64_t index) {
  uint64_t lanes = static_cast<uint64_t>(lanesPerStick(dtype));
  uint64_t last = static_cast<uint64_t>(hostShape.back());
  uint64_t inner = index % last; // position in the last host dim
  uint64_t outer = index / last; // row-major index over the other dims
  uint64_t rows = elementCount(hostShape) / last;
  uint64_t stick = (inner / lanes) * rows + outer;
  return stick * kStickBytes + (inner % lanes) * static_cast<uint64_t>(dtypeBytes(dtype));
}

bool streamLess(const Stream &a, const Stream &b) {
  return std::tuple(a.core, a.engine, a.unit) <
         std::tuple(b.core, b.engine, b.unit);
}

size_t Program::instructionCount() const {
  size_t n = 0;
  for (const Stream &s : streams)
    n += s.code.size();
  return n;
}

const std::string *Program::provenanceOf(const Stream &s, size_t index) const {
  if (index >= s.provenance.size() || s.provenance[index] == kNoProvenance ||
      s.provenance[index] >= strings.size())
    return nullptr;
  return &strings[s.provenance[index]];
}

const TensorDecl *Program::findTensor(std::string_view tensorName) const {
  for (const TensorDecl &t : tensors)
    if (t.name == tensorName)
      return &t;
  return nullptr;
}

std::string checkLoops(const Stream &stream) {
  const std::vector<Instr> &code = stream.code;
  // Ends of the loops enclosing the current instruction, innermost last.
  std::vector<size_t> open;
  for (size_t i = 0; i < code.size(); ++i) {
    while (!open.empty() && open.back() <= i)
      open.pop_back();
    if (code[i].opcode != Opcode::Loop)
      continue;
    size_t end = i + 1 + static_cast<size_t>(code[i].value[1]);
    if (end >= code.size())
      return "instruction " + std::to_string(i) +
             ": loop body runs past the stream's final halt";
    if (!open.empty() && end > open.back())
      return "instruction " + std::to_string(i) +
             ": loop body ends after the end of its enclosing loop";
    open.push_back(end);
  }
  return "";
}

std::string checkProgramFits(const Program &program,
                             const hw::HwConfig &config) {
  if (config.chip.stickBytes != kStickBytes)
    return "the ISA addresses 128-byte sticks; the config has "
           "chip.stick_bytes = " + std::to_string(config.chip.stickBytes);
  const auto memSticks = static_cast<uint64_t>(config.memory.sizeBytes) / kStickBytes;
  for (const TensorDecl &t : program.tensors)
    if (t.address > memSticks || t.sizeSticks > memSticks - t.address)
      return "tensor '" + t.name + "' at stick " + std::to_string(t.address) +
             " (" + std::to_string(t.sizeSticks) +
             " sticks) lies beyond device memory (memory.size_bytes = " +
             std::to_string(config.memory.sizeBytes) + ")";
  for (const Stream &s : program.streams) {
    if (s.core >= config.chip.cores)
      return "stream " + s.name() + ": the config has " +
             std::to_string(config.chip.cores) + " cores (chip.cores)";
    if (engineHasUnits(s.engine) && s.unit >= config.chip.coreletsPerCore)
      return "stream " + s.name() + ": the config has " +
             std::to_string(config.chip.coreletsPerCore) +
             " corelets per core (chip.corelets_per_core)";
    std::vector<size_t> open; // ends of the enclosing loops
    for (size_t i = 0; i < s.code.size(); ++i) {
      const Instr &in = s.code[i];
      const InstrDesc &d = in.desc();
      std::string where = "stream " + s.name() + ", instruction " +
                          std::to_string(i) + " (" + formatInstr(in) + "): ";
      for (size_t f = 0; f < d.fields.size(); ++f) {
        const FieldDesc &fd = d.fields[f];
        if (fd.limit == Limit::None)
          continue;
        int64_t v = in.value[f];
        int64_t bound = limitBound(fd.limit, config);
        bool fits = fd.limit == Limit::LxSticks || fd.limit == Limit::MemSticks
                        ? v > -bound && v < bound
                        : v < bound || (fd.limit == Limit::Cores && v == kCoreSelf);
        if (!fits)
          return where + "operand '" + std::string(fd.name) + "' = " +
                 std::to_string(v) + " does not fit the config (needs " +
                 std::string(limitDescription(fd.limit)) + ")";
      }
      while (!open.empty() && open.back() <= i)
        open.pop_back();
      if (in.opcode != Opcode::Loop)
        continue;
      open.push_back(i + 1 + static_cast<size_t>(in.value[1]));
      if (static_cast<int>(open.size()) > config.limits.maxLoopDepth)
        return where + "loops nested " + std::to_string(open.size()) +
               " deep (limits.max_loop_depth = " +
               std::to_string(config.limits.maxLoopDepth) + ")";
    }
  }
  return "";
}

std::string writeProgram(const Program &program) {
  std::vector<const Stream *> streams;
  for (const Stream &s : program.streams)
    streams.push_back(&s);
  std::stable_sort(streams.begin(), streams.end(),
                   [](const Stream *a, const Stream *b) {
                     return streamLess(*a, *b);
                   });
  for (size_t i = 1; i < streams.size(); ++i)
    SPYRE_ASSERT(streamLess(*streams[i - 1], *streams[i]),
                 "stream " + streams[i]->name() + " appears twice");

  // Canonical string table: source ops in first-use order, then tensor names.
  std::vector<uint32_t> order =
      canonicalOrder(streams, program.strings.size());
  std::vector<std::string> strings;
  std::vector<uint32_t> remap(program.strings.size(), kNoProvenance);
  std::map<std::string, uint32_t> indexOf;
  auto intern = [&](const std::string &s) {
    auto [it, added] =
        indexOf.emplace(s, static_cast<uint32_t>(strings.size()));
    if (added)
      strings.push_back(s);
    return it->second;
  };
  for (uint32_t p : order)
    remap[p] = intern(program.strings[p]);
  std::vector<uint32_t> tensorName;
  for (const TensorDecl &t : program.tensors)
    tensorName.push_back(intern(t.name));

  std::vector<std::pair<uint32_t, std::string>> sections;
  sections.emplace_back(kTagName, program.name);
  {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(strings.size()));
    for (const std::string &s : strings) {
      w.u32(static_cast<uint32_t>(s.size()));
      w.str(s);
    }
    sections.emplace_back(kTagStrings, std::move(w.out()));
  }
  {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(program.tensors.size()));
    for (size_t i = 0; i < program.tensors.size(); ++i) {
      const TensorDecl &t = program.tensors[i];
      w.u32(tensorName[i]);
      w.u8(static_cast<uint8_t>(t.kind));
      w.u8(static_cast<uint8_t>(t.dtype));
      w.u8(static_cast<uint8_t>(t.hostShape.size()));
      w.u8(static_cast<uint8_t>(t.deviceShape.size()));
      for (int64_t d : t.hostShape)
        w.u64(static_cast<uint64_t>(d));
      for (int64_t d : t.deviceShape)
        w.u64(static_cast<uint64_t>(d));
      w.u64(t.address);
      w.u64(t.sizeSticks);
      w.u64(t.data.size());
      w.bytes(t.data.data(), t.data.size());
    }
    sections.emplace_back(kTagTensors, std::move(w.out()));
  }
  {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(streams.size()));
    for (const Stream *s : streams) {
      w.u32(static_cast<uint32_t>(s->core));
      w.u8(static_cast<uint8_t>(s->engine));
      w.u8(static_cast<uint8_t>(s->unit));
      w.u16(0);
      w.u32(static_cast<uint32_t>(s->code.size()));
      for (const Instr &in : s->code) {
        Word word = encode(in);
        w.bytes(word.data(), word.size());
      }
    }
    sections.emplace_back(kTagStreams, std::move(w.out()));
  }
  {
    ByteWriter w;
    w.u32(static_cast<uint32_t>(streams.size()));
    for (const Stream *s : streams) {
      w.u32(static_cast<uint32_t>(s->code.size()));
      for (size_t i = 0; i < s->code.size(); ++i) {
        uint32_t p = i < s->provenance.size() ? s->provenance[i] : kNoProvenance;
        w.u32(p == kNoProvenance ? kNoProvenance : remap[p]);
      }
    }
    sections.emplace_back(kTagProvenance, std::move(w.out()));
  }
  // The lowest version that holds the program: 1.0 without host ops, 1.1
  // with them, 1.2 when it runs an instruction 1.2 added.
  const uint16_t minor = programIsaMinor(program);
  if (minor >= 1) {
    ByteWriter w;
    auto text = [&](const std::string &s) {
      w.u32(static_cast<uint32_t>(s.size()));
      w.str(s);
    };
    w.u32(static_cast<uint32_t>(program.hostOps.size()));
    for (const HostOpDecl &h : program.hostOps) {
      text(h.name);
      text(h.opType);
      text(h.attrs);
      for (const std::vector<uint32_t> *list : {&h.inputs, &h.outputs}) {
        w.u32(static_cast<uint32_t>(list->size()));
        for (uint32_t t : *list)
          w.u32(t);
      }
      w.u64(h.flops);
    }
    sections.emplace_back(kTagHost, std::move(w.out()));
  }

  ByteWriter payload;
  for (const auto &[t, body] : sections) {
    payload.u32(t);
    payload.u32(0);
    payload.u64(body.size());
    payload.str(body);
  }

  ByteWriter file;
  file.bytes(kMagic, sizeof kMagic);
  file.u16(kIsaVersionMajor);
  file.u16(minor);
  file.u32(static_cast<uint32_t>(kHeaderBytes));
  file.u64(program.configFingerprint);
  file.u64(payload.out().size());
  file.u32(0); // CRC, filled in below
  file.u32(0); // flags
  file.u64(0); // reserved
  SPYRE_ASSERT(file.out().size() == kHeaderBytes, "header size");
  file.str(payload.out());
  uint32_t crc = fileCrc(file.out());
  for (int i = 0; i < 4; ++i)
    file.out()[kCrcOffset + static_cast<size_t>(i)] =
        static_cast<char>((crc >> (8 * i)) & 0xFF);
  return std::move(file.out());
}

namespace {

void readTensors(std::string_view body, const std::string &fileName,
                 const std::vector<std::string> &strings, Program &p) {
  ByteReader r(body, fileName, "section 'TENS'");
  std::set<std::string> names;
  uint32_t count = r.u32();
  // Smallest record: the fixed fields and one host and two device dims.
  r.checkCount(count, 4 + 4 + 3 * 8 + 3 * 8, "tensor");
  for (uint32_t i = 0; i < count; ++i) {
    TensorDecl t;
    uint32_t nameIdx = r.u32();
    if (nameIdx >= strings.size())
      r.fail("tensor " + std::to_string(i) + ": name index " +
             std::to_string(nameIdx) + " is not in the string table");
    t.name = strings[nameIdx];
    std::string what = "tensor '" + printableName(t.name) + "'";
    uint8_t kind = r.u8(), dtype = r.u8(), hostRank = r.u8(), devRank = r.u8();
    if (kind >= kNumTensorKinds)
      r.fail(what + ": unknown kind " + std::to_string(kind));
    if (std::string why =
            tensorNameProblem(t.name, static_cast<TensorKind>(kind));
        !why.empty())
      r.fail(std::string(tensorKindName(static_cast<TensorKind>(kind))) +
             " " + what + ": " + why);
    if (dtype >= kNumDTypes)
      r.fail(what + ": unknown dtype " + std::to_string(dtype));
    t.kind = static_cast<TensorKind>(kind);
    t.dtype = static_cast<DType>(dtype);
    if (hostRank < 1 || hostRank > kMaxRank)
      r.fail(what + ": rank " + std::to_string(hostRank) + " is not 1.." +
             std::to_string(kMaxRank));
    uint64_t elements = 1;
    for (int d = 0; d < hostRank; ++d) {
      uint64_t dim = r.u64();
      if (dim < 1 || dim > kMaxDim || elements * dim > kMaxElements)
        r.fail(what + ": host dim " + std::to_string(d) + " has invalid size " +
               std::to_string(dim));
      elements *= dim;
      t.hostShape.push_back(static_cast<int64_t>(dim));
    }
    std::vector<int64_t> expected = deviceShapeOf(t.hostShape, t.dtype);
    if (devRank != expected.size())
      r.fail(what + ": device rank " + std::to_string(devRank) +
             " does not match its host shape");
    for (int d = 0; d < devRank; ++d)
      t.deviceShape.push_back(static_cast<int64_t>(r.u64()));
    if (t.deviceShape != expected)
      r.fail(what + ": device shape does not follow the stick layout of its "
                    "host shape");
    t.address = r.u64();
    t.sizeSticks = r.u64();
    if (t.sizeSticks != sticksOf(t.deviceShape))
      r.fail(what + ": size " + std::to_string(t.sizeSticks) +
             " sticks does not match its device shape");
    if (t.address > kMaxElements)
      r.fail(what + ": address " + std::to_string(t.address) + " is invalid");
    uint64_t dataBytes = r.u64();
    uint64_t wantBytes =
        t.kind == TensorKind::Const ? t.sizeSticks * kStickBytes : 0;
    if (dataBytes != wantBytes)
      r.fail(what + ": " + std::to_string(dataBytes) +
             " bytes of data, expected " + std::to_string(wantBytes));
    std::string_view data = r.take(dataBytes);
    t.data.assign(data.begin(), data.end());
    if (t.kind == TensorKind::Const) {
      // Padding lanes must be zero: mark every real element, check the rest.
      std::vector<bool> used(t.data.size(), false);
      int eb = dtypeBytes(t.dtype);
      for (uint64_t e = 0; e < elements; ++e) {
        uint64_t off = deviceByteOffset(t.hostShape, t.dtype, e);
        for (int b = 0; b < eb; ++b)
          used[off + static_cast<uint64_t>(b)] = true;
      }
      for (size_t b = 0; b < t.data.size(); ++b)
        if (!used[b] && t.data[b] != 0)
          r.fail(what + ": nonzero padding at data byte " + std::to_string(b));
    }
    if (!names.insert(t.name).second)
      r.fail("tensor '" + t.name + "' appears twice");
    p.tensors.push_back(std::move(t));
  }
  r.expectEnd();
  std::vector<const TensorDecl *> byAddress;
  for (const TensorDecl &t : p.tensors)
    byAddress.push_back(&t);
  std::sort(byAddress.begin(), byAddress.end(),
            [](const TensorDecl *a, const TensorDecl *b) {
              return a->address < b->address;
            });
  for (size_t i = 1; i < byAddress.size(); ++i)
    if (byAddress[i - 1]->address + byAddress[i - 1]->sizeSticks >
            byAddress[i]->address &&
        !replacesInPlace(*byAddress[i - 1], *byAddress[i]))
      r.fail("tensor '" + byAddress[i]->name + "' overlaps tensor '" +
             byAddress[i - 1]->name + "'");
}

void readStreams(std::string_view body, const std::string &fileName,
                 Program &p) {
  ByteReader r(body, fileName, "section 'STRM'");
  uint32_t count = r.u32();
  r.checkCount(count, 12, "stream");
  for (uint32_t i = 0; i < count; ++i) {
    Stream s;
    uint32_t core = r.u32();
    uint8_t engine = r.u8(), unit = r.u8();
    uint16_t reserved = r.u16();
    if (core >= kCoreSelf)
      r.fail("stream " + std::to_string(i) + ": core " + std::to_string(core) +
             " is out of range");
    if (engine >= kNumEngines)
      r.fail("stream " + std::to_string(i) + ": unknown engine " +
             std::to_string(engine));
    s.core = static_cast<int>(core);
    s.engine = static_cast<Engine>(engine);
    s.unit = unit;
    if (!engineHasUnits(s.engine) && unit != 0)
      r.fail("stream " + std::to_string(i) + ": engine " +
             std::string(engineName(s.engine)) + " has no unit " +
             std::to_string(unit));
    if (reserved != 0)
      r.fail("stream " + s.name() + ": reserved field is not zero");
    uint32_t n = r.u32();
    r.checkCount(n, kWordBytes, "instruction");
    s.code.reserve(n);
    for (uint32_t k = 0; k < n; ++k) {
      std::string_view word = r.take(kWordBytes);
      std::string error;
      std::optional<Instr> in =
          decode(reinterpret_cast<const uint8_t *>(word.data()), &error);
      auto where = [&] {
        return "stream " + s.name() + ", instruction " + std::to_string(k) +
               ": ";
      };
      if (!in)
        throw UserError(SourceLoc{fileName}, where() + error);
      if (!in->desc().runsOn(s.engine))
        throw UserError(SourceLoc{fileName},
                        where() + "'" + std::string(in->desc().mnemonic) +
                            "' cannot run on " +
                            std::string(engineName(s.engine)));
      s.code.push_back(*in);
    }
    if (s.code.empty() || s.code.back().opcode != Opcode::Halt)
      throw UserError(SourceLoc{fileName},
                      "stream " + s.name() + " does not end with 'halt'");
    std::string loops = checkLoops(s);
    if (!loops.empty())
      throw UserError(SourceLoc{fileName},
                      "stream " + s.name() + ", " + loops);
    if (!p.streams.empty() && !streamLess(p.streams.back(), s))
      r.fail("stream " + s.name() + " is out of order or appears twice");
    p.streams.push_back(std::move(s));
  }
  r.expectEnd();
}

void readProvenance(std::string_view body, const std::string &fileName,
                    size_t stringCount, Program &p) {
  ByteReader r(body, fileName, "section 'PROV'");
  uint32_t count = r.u32();
  if (count != p.streams.size())
    r.fail(std::to_string(count) + " streams, but the program has " +
           std::to_string(p.streams.size()));
  for (Stream &s : p.streams) {
    uint32_t n = r.u32();
    if (n != s.code.size())
      r.fail("stream " + s.name() + " has " + std::to_string(n) +
             " entries for " + std::to_string(s.code.size()) +
             " instructions");
    r.checkCount(n, 4, "provenance");
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t v = r.u32();
      if (v != kNoProvenance && v >= stringCount)
        r.fail("stream " + s.name() + ", instruction " + std::to_string(k) +
               ": string index " + std::to_string(v) + " is out of range");
      s.provenance.push_back(v);
    }
  }
  r.expectEnd();
}

void readHostOps(std::string_view body, const std::string &fileName,
                 Program &p) {
  ByteReader r(body, fileName, "section 'HOST'");
  uint32_t count = r.u32();
  // Smallest record: three empty strings, two counts and the flops.
  r.checkCount(count, 3 * 4 + 2 * 4 + 8, "host op");
  for (uint32_t i = 0; i < count; ++i) {
    HostOpDecl h;
    auto text = [&] { return std::string(r.take(r.u32())); };
    h.name = text();
    h.opType = text();
    h.attrs = text();
    if (hasControlChar(h.name) || hasControlChar(h.opType))
      r.fail("host op " + std::to_string(i) + " '" + printableName(h.name) +
             "': its name or op type holds a control character");
    for (std::vector<uint32_t> *list : {&h.inputs, &h.outputs}) {
      uint32_t n = r.u32();
      if (n > kMaxHostOperands)
        r.fail("host op " + std::to_string(i) + ": " + std::to_string(n) +
               " tensors (at most " + std::to_string(kMaxHostOperands) + ")");
      r.checkCount(n, 4, "tensor index");
      for (uint32_t k = 0; k < n; ++k)
        list->push_back(r.u32());
    }
    h.flops = r.u64();
    std::string problem = checkHostOp(p, h);
    if (!problem.empty())
      r.fail("host op " + std::to_string(i) + " ('" + h.name + "'): " + problem);
    p.hostOps.push_back(std::move(h));
  }
  r.expectEnd();
  const int opField = instrDesc(Opcode::Host).fieldIndex("op");
  for (const Stream &s : p.streams)
    for (size_t k = 0; k < s.code.size(); ++k)
      if (s.code[k].opcode == Opcode::Host &&
          static_cast<uint64_t>(s.code[k].value[static_cast<size_t>(opField)]) >=
              p.hostOps.size())
        throw UserError(SourceLoc{fileName},
                        "stream " + s.name() + ", instruction " +
                            std::to_string(k) + ": host op " +
                            std::to_string(s.code[k].value[static_cast<size_t>(opField)]) +
                            " does not exist (the program has " +
                            std::to_string(p.hostOps.size()) + ")");
}

} // namespace

std::string checkHostOp(const Program &program, const HostOpDecl &op) {
  if (op.inputs.empty() || op.outputs.empty())
    return "a host op has at least one input and one output tensor";
  std::vector<host::HostShape> shapes;
  for (const std::vector<uint32_t> *list : {&op.inputs, &op.outputs})
    for (uint32_t t : *list) {
      if (t >= program.tensors.size())
        return "tensor index " + std::to_string(t) + " is out of range (" +
               std::to_string(program.tensors.size()) + " tensors)";
      const TensorDecl &d = program.tensors[t];
      if (d.dtype != DType::Dl16 && d.dtype != DType::Fp32)
        return "tensor '" + d.name + "' is " + std::string(dtypeName(d.dtype)) +
               "; host ops read and write dl16 and fp32 tensors";
      if (list == &op.outputs &&
          (d.kind == TensorKind::Input || d.kind == TensorKind::Const))
        return "output tensor '" + d.name + "' is an " +
               std::string(tensorKindName(d.kind)) + " tensor";
      if (list == &op.inputs)
        shapes.push_back(d.hostShape);
    }
  std::string why;
  std::optional<nlohmann::json> attrs = host::parseHostAttrs(op.attrs, why);
  if (!attrs)
    return why;
  if (!host::isHostOpType(op.opType))
    return "op type '" + op.opType + "' has no host implementation";
  host::HostInference inf = host::inferHostOp({op.opType, *attrs}, shapes);
  if (!inf.ok())
    return op.opType + ": " + inf.error;
  if (inf.outputs.size() != op.outputs.size())
    return op.opType + " gives " + std::to_string(inf.outputs.size()) +
           " outputs, the op lists " + std::to_string(op.outputs.size());
  for (size_t i = 0; i < inf.outputs.size(); ++i) {
    const TensorDecl &d = program.tensors[op.outputs[i]];
    // A rank-0 result is held as a one-element tensor of shape [1].
    const host::HostShape want =
        inf.outputs[i].empty() ? host::HostShape{1} : inf.outputs[i];
    if (d.hostShape != want) {
      std::string got, exp;
      for (int64_t v : d.hostShape)
        got += (got.empty() ? "" : ", ") + std::to_string(v);
      for (int64_t v : want)
        exp += (exp.empty() ? "" : ", ") + std::to_string(v);
      return "output tensor '" + d.name + "' is [" + got + "], " + op.opType +
             " gives [" + exp + "]";
    }
  }
  return "";
}

Program readProgram(std::string_view bytes, const std::string &fileName) {
  auto fail = [&](const std::string &msg) {
    throw UserError(SourceLoc{fileName}, msg);
  };
  if (bytes.size() < kHeaderBytes)
    fail("truncated: " + std::to_string(bytes.size()) +
         " bytes, shorter than the " + std::to_string(kHeaderBytes) +
         "-byte program header");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    fail("not a Spyre program (bad magic)");
  uint16_t major = static_cast<uint16_t>(loadLe(bytes, 8, 2));
  uint16_t minor = static_cast<uint16_t>(loadLe(bytes, 10, 2));
  if (major != kIsaVersionMajor || minor > kIsaVersionMinor)
    fail("unsupported ISA version " + std::to_string(major) + "." +
         std::to_string(minor) + " (this build reads " +
         std::to_string(kIsaVersionMajor) + "." +
         std::to_string(kIsaVersionMinor) + ")");
  uint32_t headerSize = static_cast<uint32_t>(loadLe(bytes, 12, 4));
  if (headerSize != kHeaderBytes)
    fail("unsupported header size " + std::to_string(headerSize) +
         " (expected " + std::to_string(kHeaderBytes) + ")");
  uint64_t fingerprint = loadLe(bytes, 16, 8);
  uint64_t payloadSize = loadLe(bytes, 24, 8);
  uint32_t storedCrc = static_cast<uint32_t>(loadLe(bytes, kCrcOffset, 4));
  uint64_t have = bytes.size() - kHeaderBytes;
  if (have < payloadSize)
    fail("truncated: the header says the payload is " +
         std::to_string(payloadSize) + " bytes, the file has " +
         std::to_string(have));
  if (have > payloadSize)
    fail(std::to_string(have - payloadSize) +
         " unexpected bytes after the payload");
  uint32_t crc = fileCrc(bytes);
  if (crc != storedCrc)
    fail("checksum mismatch (stored 0x" + toHex(storedCrc, 8) +
         ", computed 0x" + toHex(crc, 8) + "): the file is corrupted");
  if (loadLe(bytes, 36, 4) != 0)
    fail("unsupported header flags 0x" + toHex(loadLe(bytes, 36, 4), 8) +
         " (expected 0)");
  if (loadLe(bytes, 40, 8) != 0)
    fail("reserved header field is not zero");

  // Split the payload into sections, each checked to lie inside it.
  std::map<uint32_t, std::string_view> sections;
  ByteReader payload(bytes.substr(kHeaderBytes), fileName, "payload");
  while (payload.remaining() > 0) {
    size_t at = payload.pos();
    uint32_t t = payload.u32();
    uint32_t reserved = payload.u32();
    uint64_t size = payload.u64();
    std::string name = "section '" + tagText(t) + "'";
    if (size > payload.remaining())
      fail(name + " at payload byte " + std::to_string(at) + " has size " +
           std::to_string(size) + ", past the end of the payload (" +
           std::to_string(payload.remaining()) + " bytes left)");
    if (reserved != 0)
      fail(name + ": reserved field is not zero");
    if (t != kTagName && t != kTagStrings && t != kTagTensors &&
        t != kTagStreams && t != kTagProvenance &&
        (t != kTagHost || minor < 1))
      fail("unknown " + name);
    if (sections.count(t))
      fail(name + " appears twice");
    sections[t] = payload.take(size);
  }
  for (uint32_t t : {kTagName, kTagStrings, kTagTensors, kTagStreams,
                     kTagProvenance, kTagHost})
    if (!sections.count(t) && (t != kTagHost || minor >= 1))
      fail("missing section '" + tagText(t) + "'");

  Program p;
  p.configFingerprint = fingerprint;
  p.name = std::string(sections[kTagName]);
  if (hasControlChar(p.name))
    throw UserError(SourceLoc{fileName},
                    "section 'NAME': the program name '" + printableName(p.name) +
                        "' holds a control character");

  std::vector<std::string> strings;
  {
    ByteReader r(sections[kTagStrings], fileName, "section 'STRS'");
    uint32_t count = r.u32();
    r.checkCount(count, 4, "string");
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t len = r.u32();
      strings.emplace_back(r.take(len));

    }
    r.expectEnd();
  }
  readTensors(sections[kTagTensors], fileName, strings, p);
  readStreams(sections[kTagStreams], fileName, p);
  readProvenance(sections[kTagProvenance], fileName, strings.size(), p);
  // A 1.0 file has no HOST section: a `host` instruction there finds no op.
  readHostOps(minor >= 1 ? sections[kTagHost] : std::string_view("\0\0\0\0", 4),
              fileName, p);
  for (size_t si = 0; si < p.streams.size(); ++si)
    for (size_t i = 0; i < p.streams[si].code.size(); ++i)
      if (const Opcode op = p.streams[si].code[i].opcode;
          opcodeIsaMinor(op) > minor)
        fail("stream " + std::to_string(si) + " instruction " +
             std::to_string(i) + ": '" + std::string(instrDesc(op).mnemonic) +
             "' needs ISA 1." + std::to_string(opcodeIsaMinor(op)) +
             ", the file is 1." + std::to_string(minor));

  // Keep only the strings that name source ops, in canonical order, so a
  // program read back equals the one that was written.
  std::vector<const Stream *> streams;
  for (const Stream &s : p.streams)
    streams.push_back(&s);
  std::vector<uint32_t> order = canonicalOrder(streams, strings.size());
  std::vector<uint32_t> remap(strings.size(), kNoProvenance);
  for (uint32_t i = 0; i < order.size(); ++i) {
    remap[order[i]] = i;
    p.strings.push_back(strings[order[i]]);
    if (hasControlChar(p.strings.back()))
      throw UserError(SourceLoc{fileName},
                      "section 'PROV': op name '" +
                          printableName(p.strings.back()) +
                          "' holds a control character");
  }
  for (Stream &s : p.streams)
    for (uint32_t &v : s.provenance)
      if (v != kNoProvenance)
        v = remap[v];
  return p;
}

uint16_t opcodeIsaMinor(Opcode op) {
  return op == Opcode::Lr || op == Opcode::Rargmax ? 2 : 0;
}

uint16_t programIsaMinor(const Program &program) {
  uint16_t minor = program.hostOps.empty() ? 0 : 1;
  for (const Stream &s : program.streams)
    for (const Instr &in : s.code)
      minor = std::max(minor, opcodeIsaMinor(in.opcode));
  return minor;
}

bool replacesInPlace(const TensorDecl &a, const TensorDecl &b) {
  const bool pair =
      (a.kind == TensorKind::Input && b.kind == TensorKind::Output) ||
      (a.kind == TensorKind::Output && b.kind == TensorKind::Input);
  return pair && a.address == b.address && a.sizeSticks == b.sizeSticks &&
         a.dtype == b.dtype;
}

} // namespace spyre::isa
