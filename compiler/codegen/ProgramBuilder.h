// Building a Spyre program (isa::Program) in code: tensors placed in device
// memory by a bump allocator, one instruction stream per (core, engine,
// unit), instructions assembled field by field through the ISA table, hardware
// loops with their labels handled, provenance, per-core sync counters and a
// final check of everything the program file and the assembler would check.
//
// Instructions are built with `instr<Opcode>()`, which gives a builder typed
// by the instruction's operand format (isa/Formats.def) with one setter per
// field, named as the ISA table names the field (docs/isa.md); omitted
// optional fields take their table defaults:
//
//   using isa::Opcode;
//   s.append(instr<Opcode::Ld>().lx(Addr{r1}).mem(at(0x40)).run(4));
//   s.append(instr<Opcode::Mm>().c(c).a(a).b(b).m(8).k(64).n(64)
//                .out(isa::StickFormat::Dl16));
//
// A field the format does not have (`instr<Opcode::Ld>().dst(...)`) or a
// misspelt one does not compile. An opcode known only at run time (an SFU
// op chosen by the caller) takes its format as the type:
// `instrOf<isa::Format::SfuUnary>(op)` asserts that `op` has that format.
// Setters take an Addr for address fields, a float for FP32 immediates,
// isa::StickFormat or isa::Src2Mode for enum fields and an integer for the
// rest; a value of the wrong kind or out of the field's range is an
// assertion when the instruction is built.
//
// Every address is in sticks. Errors here are bugs of the caller (a kernel
// asked for an impossible instruction), so they are assertions, not user
// diagnostics.
#pragma once

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace spyre::codegen {

/// An address operand: base register + signed offset in sticks.
struct Addr {
  int reg = 0;
  int64_t offset = 0;

  Addr operator+(int64_t d) const { return {reg, offset + d}; }
  friend bool operator==(const Addr &, const Addr &) = default;
};

/// An absolute address (base r0).
inline Addr at(int64_t offset) { return {0, offset}; }

/// One instruction under construction: the untyped part of InstrOf, which
/// holds the values and checks them against the table row.
class InstrBuilder {
public:
  explicit InstrBuilder(isa::Opcode op);

  /// The instruction with defaults filled in. Asserts that every required
  /// field was given and every value is in its field's range.
  isa::Instr build() const;
  const isa::InstrDesc &desc() const { return *desc_; }

protected:
  /// Integer, register, counter, core or label-length field.
  void setInt(isa::Field field, int64_t value);
  /// Address field (LX or memory).
  void setAddr(isa::Field field, Addr addr);
  /// FP32 immediate field.
  void setFloat(isa::Field field, float value);
  /// Enum field by its value's index.
  void setEnum(isa::Field field, int64_t valueIndex);

  template <class V> void put(isa::Field field, V value) {
    if constexpr (std::is_same_v<V, Addr>)
      setAddr(field, value);
    else if constexpr (std::is_enum_v<V>)
      setEnum(field, static_cast<int64_t>(value));
    else if constexpr (std::is_floating_point_v<V>)
      setFloat(field, static_cast<float>(value));
    else {
      static_assert(std::is_integral_v<V>, "not a field value");
      setInt(field, static_cast<int64_t>(value));
    }
  }

private:
  size_t index(isa::Field field) const;

  const isa::InstrDesc *desc_;
  isa::Instr instr_;
  std::vector<bool> given_;
};

/// An instruction of operand format F under construction: one setter per
/// field name (isa/Fields.def); calling the setter of a field F lacks does
/// not compile (its constraint `has(isa::Field::X)` is not satisfied).
template <isa::Format F> class InstrOf : public InstrBuilder {
public:
  static constexpr isa::Format kFormat = F;

  explicit InstrOf(isa::Opcode op) : InstrBuilder(checkFormat(op)) {}

  /// Whether instructions of this format have `field`.
  static constexpr bool has(isa::Field field) {
    return isa::hasField(F, field);
  }

#define SPYRE_FIELD(Name, name)                                                \
  template <class V>                                                           \
    requires(has(isa::Field::Name))                                            \
  InstrOf &name(V value) {                                                     \
    put(isa::Field::Name, value);                                              \
    return *this;                                                              \
  }
#include "isa/Fields.def"
#undef SPYRE_FIELD

private:
  static isa::Opcode checkFormat(isa::Opcode op) {
    SPYRE_ASSERT(isa::formatOf(op) == F,
                 std::string(isa::opcodeName(op)) + " is not of format " +
                     std::string(isa::formatName(F)));
    return op;
  }
};

/// The builder of instruction `Op`, typed by its format.
template <isa::Opcode Op> InstrOf<isa::formatOf(Op)> instr() {
  return InstrOf<isa::formatOf(Op)>(Op);
}

/// The builder of `op`, chosen at run time among the opcodes of format F
/// (asserts that `op` is one of them).
template <isa::Format F> InstrOf<F> instrOf(isa::Opcode op) {
  return InstrOf<F>(op);
}

class ProgramBuilder;

/// One engine instance's stream under construction.
class StreamBuilder {
public:
  int core() const { return stream_.core; }
  isa::Engine engine() const { return stream_.engine; }
  int unit() const { return stream_.unit; }
  std::string name() const { return stream_.name(); }
  size_t size() const { return stream_.code.size(); }

  /// Appends an instruction with the builder's current source op.
  StreamBuilder &append(const isa::Instr &in);
  StreamBuilder &append(const InstrBuilder &in) { return append(in.build()); }

  void li(int rd, int64_t value);
  void addi(int rd, int rs, int64_t imm);
  /// rd = rs (addi rd, rs, 0).
  void mov(int rd, int rs) { addi(rd, rs, 0); }
  /// Adds `value` to counter `counter` of `core` (-1: this core).
  void signal(int counter, int64_t value, int core = -1);
  void wait(int counter, int64_t value);
  void barrier(int id, int64_t count);

  /// Opens a hardware loop of `count` iterations (1 .. max_loop_count); the
  /// matching endLoop closes it. Loops nest up to max_loop_depth.
  void beginLoop(int64_t count);
  /// Closes the innermost open loop; a loop with an empty body is removed.
  void endLoop();
  int loopDepth() const { return static_cast<int>(openLoops_.size()); }

  /// A free register r1..r15 of this stream; asserts when none is left.
  int allocReg();
  void freeReg(int reg);

  /// Only ProgramBuilder makes streams (ProgramBuilder::stream).
  class Key {
    friend class ProgramBuilder;
    Key() = default;
  };
  StreamBuilder(Key, ProgramBuilder &owner, int core, isa::Engine e, int unit);

private:
  friend class ProgramBuilder;

  ProgramBuilder *owner_;
  isa::Stream stream_;
  std::vector<size_t> openLoops_;
  uint16_t usedRegs_ = 1; ///< bit r set when allocated; r0 is never free
};

/// Thrown by ProgramBuilder::allocCounter when a core has no free counter:
/// the config's limits.sync_counters_per_core is too few for the plan, which
/// is the config's fault, not the compiler's.
struct SyncCountersExhausted {
  int core;
  int counters;
};

class ProgramBuilder {
public:
  ProgramBuilder(const hw::HwConfig &config, std::string name = {});
  ProgramBuilder(const ProgramBuilder &) = delete;
  ProgramBuilder &operator=(const ProgramBuilder &) = delete;
  ~ProgramBuilder();

  const hw::HwConfig &config() const { return config_; }

  // ---- Tensors in device memory ----

  /// Device addresses are handed out from `next` upward, each tensor aligned
  /// to `alignSticks` (1: the stick alignment every address already has).
  void setAllocator(uint64_t next, uint64_t alignSticks = 1);
  /// The first device address (in sticks) not yet handed out.
  uint64_t nextAddress() const { return nextAddress_; }
  /// Reserves `sticks` of device memory; returns the address in sticks.
  uint64_t allocate(uint64_t sticks);
  /// Declares a tensor in the stick layout of its host shape
  /// (docs/hardware.md#device-layout) at the next free address. The
  /// reference stays valid while the builder lives.
  const isa::TensorDecl &addTensor(std::string name, isa::TensorKind kind,
                                   isa::DType dtype,
                                   std::vector<int64_t> hostShape);
  /// The same at a given address (checked for overlap by finish()).
  const isa::TensorDecl &addTensorAt(std::string name, isa::TensorKind kind,
                                     isa::DType dtype,
                                     std::vector<int64_t> hostShape,
                                     uint64_t address);
  /// A constant with its host-order values, stored in device format.
  const isa::TensorDecl &addConst(std::string name, isa::DType dtype,
                                  std::vector<int64_t> hostShape,
                                  const std::vector<float> &values);
  /// A constant declared without its data (a program for a timing-only
  /// run: the simulator reads constant data only to compute numbers).
  const isa::TensorDecl &addConstWithoutData(std::string name,
                                             isa::DType dtype,
                                             std::vector<int64_t> hostShape);
  const isa::TensorDecl *findTensor(std::string_view name) const;
  /// Address of a constant of `sticks` zero sticks shared by all kernels
  /// (declared on first use as the const tensor `__zeros`, 64 sticks).
  uint64_t zeroSticks(int64_t sticks);

  // ---- Streams, provenance, synchronisation ----

  /// The stream of (core, engine, unit), created on first use.
  StreamBuilder &stream(int core, isa::Engine engine, int unit = 0);
  /// Whether that stream exists yet.
  bool hasStream(int core, isa::Engine engine, int unit = 0) const;
  /// Source op recorded for the instructions appended from now on (empty:
  /// none).
  void setOp(std::string op);
  /// Provenance index of the current op (isa::kNoProvenance when none).
  uint32_t currentProvenance() const { return currentOp_; }

  /// A sync counter of `core` nobody holds; asserts when all are taken.
  /// Kernels leave their counters at zero and release them. A released
  /// counter is handed out again only after the next barrierAll(): before
  /// it, a stream that is behind may still be waiting for its last tokens,
  /// and a new user's signals would satisfy that wait. Throws
  /// SyncCountersExhausted when none is free.
  int allocCounter(int core);
  void releaseCounter(int core, int counter);
  /// Whether a kernel took a counter of `core` since the last barrierAll.
  bool countersUsed(int core) const;

  /// Every stream meets at a chip-wide barrier (id 0): what any
  /// stream did before it (device memory included) is done before any stream
  /// goes on. Every stream of every core (each engine and unit) is created
  /// at the first barrier, so no stream starts later without it. Sequential
  /// kernels that exchange data through device memory are separated by one.
  void barrierAll();

  /// The highest LX stick (exclusive) a kernel reserved on `core`.
  int64_t lxHighWater(int core) const;
  void noteLxUse(int core, int64_t endStick);

  /// Ends every stream with halt and checks the program: loops well nested
  /// within the config's depth and count, every field in range and within
  /// the config's limits (LX and memory offsets, counters, cores, barriers),
  /// tensors inside device memory and not overlapping. Asserts on a problem.
  /// The builder is spent afterwards.
  isa::Program finish();

private:
  friend class StreamBuilder;

  const hw::HwConfig &config_;
  isa::Program program_;
  std::deque<isa::TensorDecl> tensors_; ///< stable addresses until finish()
  std::map<std::tuple<int, int, int>, std::unique_ptr<StreamBuilder>> streams_;
  uint32_t currentOp_ = isa::kNoProvenance;
  uint64_t nextAddress_ = 0;
  uint64_t align_ = 1;
  enum class CounterState : uint8_t { Free, Held, Released };
  std::vector<std::vector<CounterState>> counters_; ///< [core][counter]
  std::vector<int64_t> lxHighWater_;
  std::string zerosName_;
  bool finished_ = false;
  /// Set while addConstWithoutData declares its tensor.
  bool constWithoutData_ = false;
};

/// Checks a finished program against `config` as ProgramBuilder::finish()
/// does; returns the first problem or an empty string.
std::string validateProgram(const isa::Program &program,
                            const hw::HwConfig &config);

} // namespace spyre::codegen
