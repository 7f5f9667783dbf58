// A Spyre program: per-core, per-engine instruction streams, the device
// memory map of its tensors, and the source op of every instruction; plus the
// program file that holds it (layout in docs/program-file.md).
#pragma once

#include "isa/Instr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::hw {
struct HwConfig;
}

namespace spyre::isa {

/// ISA version of this build, stored in every program file. 1.1 added the
/// host fallback (the HOST section and the `host` instruction); 1.2 the
/// register load `lr` (an address taken at run time) and the row arg-max
/// `rargmax`. A file carries the lowest version that holds its program, so
/// older readers still take a program that uses nothing newer.
constexpr uint16_t kIsaVersionMajor = 1;
constexpr uint16_t kIsaVersionMinor = 2;
constexpr size_t kHeaderBytes = 48;
/// Provenance value of an instruction with no source op.
constexpr uint32_t kNoProvenance = 0xFFFFFFFF;

/// Device formats of tensors.
enum class DType : uint8_t { Dl16, Fp32, Int8, Int32 };
constexpr int kNumDTypes = 4;

enum class TensorKind : uint8_t {
  Input,   ///< written by the host before the run
  Output,  ///< read back by the host after the run
  Const,   ///< values stored in the program file
  Scratch, ///< device memory for intermediates, not seen by the host
};
constexpr int kNumTensorKinds = 4;

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
int dtypeBytes(DType t);
/// Elements per 128-byte stick: 64 DL16, 32 FP32/INT32, 128 INT8.
int lanesPerStick(DType t);
std::string_view tensorKindName(TensorKind k);
std::optional<TensorKind> parseTensorKind(std::string_view name);

/// Longest tensor name: `NAME.npy` must fit a file name (255 bytes).
constexpr size_t kMaxTensorNameBytes = 250;

/// Why `name` cannot name a tensor of kind `kind`, or an empty string. A
/// program file is untrusted input, and an input or output tensor's name
/// becomes the file name NAME.npy in the folders of `spyre sim --inputs`
/// and `--outputs`: such a name must be a plain file name (not empty, `.` or
/// `..`, no `/`, at most kMaxTensorNameBytes). No name may hold a control
/// character, which would break the lines of listings and messages.
std::string tensorNameProblem(std::string_view name, TensorKind kind);

/// `name` for a message: printable ASCII as it is, any other byte as `\xNN`.
std::string printableName(std::string_view name);

/// Whether `text` holds a control character (a byte below 0x20, or 0x7f).
/// Names a program file carries (the program's, its ops', its host ops')
/// are printed in listings, summaries and findings: a newline would forge a
/// line, an escape sequence drive the terminal. The loader and the
/// assembler refuse them; the compiler writes such a name as printableName.
bool hasControlChar(std::string_view text);

/// Device shape under the stick rule (docs/hardware.md#device-layout): the
/// host's last dim is split into ceil(n / lanes) stick blocks placed outermost,
/// so host [d0, ..., dk] becomes [blocks, d0, ..., dk-1, lanes]. [3, 100] dl16
/// -> [2, 3, 64].
std::vector<int64_t> deviceShapeOf(const std::vector<int64_t> &hostShape,
                                   DType dtype);
/// Sticks the device layout takes: every device dim but the lanes.
uint64_t sticksOf(const std::vector<int64_t> &deviceShape);
/// Byte offset in the device layout of the host element with row-major
/// linear index `index`.
uint64_t deviceByteOffset(const std::vector<int64_t> &hostShape, DType dtype,
                          uint64_t index);
/// Number of host elements (product of the host shape).
uint64_t elementCount(const std::vector<int64_t> &hostShape);

struct TensorDecl {
  std::string name;
  TensorKind kind = TensorKind::Input;
  DType dtype = DType::Dl16;
  std::vector<int64_t> hostShape;
  std::vector<int64_t> deviceShape;
  /// Device-memory address in sticks.
  uint64_t address = 0;
  uint64_t sizeSticks = 0;
  /// Const tensors: the device bytes (sizeSticks * 128, padding zero).
  std::vector<uint8_t> data;

  friend bool operator==(const TensorDecl &, const TensorDecl &) = default;
};

/// Whether `a` and `b` are an input and an output in the same sticks (same
/// address, size and dtype): the output replaces the input in place, as a
/// key/value cache page that a step reads and writes back with its new
/// token (docs/program-file.md). The only overlap a program may have.
bool replacesInPlace(const TensorDecl &a, const TensorDecl &b);

/// An op the host runs for the program (the `host` instruction's operand
/// indexes Program::hostOps): an ONNX op type and attributes that the host
/// library (host/HostOp.h) computes from tensors in device memory.
struct HostOpDecl {
  std::string name;   ///< the source op, for stats and traces
  std::string opType; ///< ONNX op type
  std::string attrs;  ///< the attributes, a JSON object
  std::vector<uint32_t> inputs;  ///< indices into Program::tensors
  std::vector<uint32_t> outputs; ///< indices into Program::tensors
  uint64_t flops = 0;            ///< host work, timed at host.host_gflops

  friend bool operator==(const HostOpDecl &, const HostOpDecl &) = default;
};

/// One engine instance's in-order instruction stream.
struct Stream {
  int core = 0;
  Engine engine = Engine::DmaLoad;
  int unit = 0;
  std::vector<Instr> code;
  /// Per instruction: index into Program::strings of its source op, or
  /// kNoProvenance.
  std::vector<uint32_t> provenance;

  std::string name() const { return streamName(core, engine, unit); }
  friend bool operator==(const Stream &, const Stream &) = default;
};

/// Order of streams in a program and its file: by core, engine, unit.
bool streamLess(const Stream &a, const Stream &b);

struct Program {
  std::string name;
  uint64_t configFingerprint = 0;
  std::vector<TensorDecl> tensors;
  /// Sorted by (core, engine, unit), at most one per key.
  std::vector<Stream> streams;
  /// Names of source ops (the targets of provenance indices).
  std::vector<std::string> strings;
  /// Ops run on the host (section HOST); empty for most programs.
  std::vector<HostOpDecl> hostOps;

  size_t instructionCount() const;
  /// Source op of an instruction, or nullptr.
  const std::string *provenanceOf(const Stream &s, size_t index) const;
  const TensorDecl *findTensor(std::string_view name) const;
  friend bool operator==(const Program &, const Program &) = default;
};

/// Checks the loop structure of a stream: every body ends inside the stream
/// and before its final halt, and loops nest properly. Returns the first
/// problem (naming the instruction index) or an empty string. Counts and
/// depths against a config are the assembler's job.
std::string checkLoops(const Stream &stream);

/// Checks what a program file cannot check alone, against the config it is
/// to run on: 128-byte sticks, every tensor inside device memory, every
/// stream on a core and corelet the config has, every field bounded by the
/// config (the instruction table's `Limit`) within its bound, loops nested
/// at most limits.max_loop_depth deep. Returns the first problem
/// (naming the stream and instruction) or an empty string. The assembler
/// guarantees all of it; a program read from a file must be checked before
/// it runs.
std::string checkProgramFits(const Program &program, const hw::HwConfig &config);

/// The ISA minor version that introduced `op` (0 for the 1.0 set).
uint16_t opcodeIsaMinor(Opcode op);
/// The lowest ISA minor version that holds `program`: 1 with host ops, the
/// highest of its instructions' versions.
uint16_t programIsaMinor(const Program &program);

/// The program file bytes. Streams are written in (core, engine, unit) order
/// and the string table is rebuilt canonically, so equal programs give equal
/// bytes.
std::string writeProgram(const Program &program);

/// Checks a host op against the program's tensors: indices in range, float
/// tensors, outputs not inputs or constants, attributes a JSON object, an
/// op type the host library runs, and output shapes equal to what the host
/// library infers from the input shapes. Returns the problem or "".
std::string checkHostOp(const Program &program, const HostOpDecl &op);

/// Parses and checks a program file. Every problem throws a UserError naming
/// `fileName`: truncated, not a Spyre program, unsupported ISA version,
/// checksum mismatch, a malformed section, or an instruction that does not
/// decode.
Program readProgram(std::string_view bytes, const std::string &fileName);

} // namespace spyre::isa
