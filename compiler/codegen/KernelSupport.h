// Pieces every kernel is made of (internal to compiler/codegen): the cores,
// units and LX region a kernel may use, an LX bump allocator, balanced
// splits, buffer rings synchronised by counters, a loop-nest emitter that
// steps address registers, and terse builders for DMA and SFU instructions.
#pragma once

#include "compiler/codegen/Kernels.h"
#include "compiler/codegen/ProgramBuilder.h"
#include "compiler/codegen/TensorRef.h"

#include <functional>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

namespace spyre::codegen {

/// KernelOptions resolved against the config.
struct Resources {
  int firstCore = 0;
  int cores = 1;
  int units = 1;
  int64_t lxBase = 0;
  int64_t lxEnd = 0;
  /// Buffers per streamed operand: two let a core's load, compute and
  /// store overlap; one serialises them (KernelOptions::overlap).
  int buffers = 2;
  int64_t lxSticks() const { return lxEnd - lxBase; }
};
Resources resources(const hw::HwConfig &config, const KernelOptions &opt);

/// Bump allocation of LX sticks inside a kernel's region; asserts on
/// overflow with the kernel's name.
class LxArena {
public:
  LxArena(int64_t base, int64_t end, std::string what)
      : next_(base), end_(end), what_(std::move(what)) {}
  int64_t take(int64_t sticks);
  /// `n` buffers of `sticks` each, one after another.
  std::vector<int64_t> takeEach(int n, int64_t sticks);
  int64_t next() const { return next_; }

private:
  int64_t next_, end_;
  std::string what_;
};

/// [begin, end) of part `i` when `n` items are split into `parts` parts
/// whose sizes differ by at most one (larger parts first).
std::pair<int64_t, int64_t> splitRange(int64_t n, int64_t parts, int64_t i);

/// ceil(a / b) for positive b.
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ------------------------------------------------------------ buffer rings

/// One or two LX buffers passed around a pipeline of stages on one core.
/// Stage 0 fills a buffer, each later stage works on it after every member
/// of the stage before has released it, and once the last stage releases
/// it, stage 0 may fill it again. A stage may have several members (the PT
/// units of a core each computing some rows); every member waits for all
/// members of the stage before. Each participant keeps the current buffer's
/// address in a register and steps to the next buffer when it releases one,
/// so loop bodies stay the same for every iteration. With one buffer, stage
/// 0 fills it again only after the last stage released it, so the stages
/// take turns on it instead of overlapping.
///
/// Counters: one per (member, member of the stage before) pair, on `core`.
/// A counter per pair, not per member: a fast producer may be a buffer
/// ahead of a slow one, and a count of tokens from several producers would
/// not say which buffer they are for. Stage 0's counters are pre-signalled
/// with the ring depth so the first fills do not wait; close() takes those
/// tokens back, leaving every counter at zero.
class BufferRing {
public:
  BufferRing(ProgramBuilder &pb, int core, std::vector<int64_t> slots,
             std::vector<std::vector<StreamBuilder *>> stages);

  /// In participant `s`'s prologue: address registers and, for stage 0,
  /// the pre-signal.
  void open(StreamBuilder &s);
  /// Before `s` touches the current buffer.
  void acquire(StreamBuilder &s);
  /// After `s` is done with it; `s` moves on to the next buffer.
  void release(StreamBuilder &s);
  /// release() in two parts, for a buffer handed over piece by piece: post
  /// gives the next stage one token (it may use what is filled so far, and
  /// acquires once per post), advance moves `s` on to the next buffer.
  void post(StreamBuilder &s);
  void advance(StreamBuilder &s);
  /// The current buffer in `s` (register base).
  Addr slot(StreamBuilder &s) const;
  /// The buffer `s` released last (register base): it may still read it
  /// (e.g. pass it on) until its next acquire of that buffer.
  Addr released(StreamBuilder &s) const;
  /// In participant `s`'s epilogue: stage 0 waits until every buffer came
  /// back; registers are freed.
  void close(StreamBuilder &s);
  /// After every participant closed: gives the counters back.
  void finish();

private:
  struct Member {
    int stage = 0;
    /// Counter of this member per member of the stage before (the last
    /// stage for stage 0), by stream.
    std::map<StreamBuilder *, int> from;
    int cur = 0, other = 0; ///< registers
  };
  const std::vector<StreamBuilder *> &before(const Member &m) const;
  const std::vector<StreamBuilder *> &after(const Member &m) const;
  Member &member(StreamBuilder &s);
  const Member &member(StreamBuilder &s) const;

  ProgramBuilder &pb_;
  int core_;
  std::vector<int64_t> slots_;
  std::vector<std::vector<StreamBuilder *>> stages_;
  std::map<StreamBuilder *, Member> members_;
};

/// A one-time hand-over on one core: `producer` fills something once
/// (constants), every consumer waits for it once.
class OnceSignal {
public:
  OnceSignal(ProgramBuilder &pb, int core,
             std::vector<StreamBuilder *> consumers);
  /// In the producer, after the fill.
  void post(StreamBuilder &producer);
  /// In a consumer, before the first use.
  void await(StreamBuilder &consumer);
  void finish();

private:
  ProgramBuilder &pb_;
  int core_;
  std::vector<std::pair<StreamBuilder *, int>> counters_;
};

// --------------------------------------------------------------- loop nest

/// One level of a tiled loop nest: `tiles` iterations, the last of them a
/// tail (a smaller tile) when `hasTail`; `peelFirst` emits the first
/// iteration on its own (for code that differs there, such as acc=0).
struct NestLevel {
  int64_t tiles = 1;
  bool hasTail = false;
  bool peelFirst = false;
  /// Emit every iteration in line instead of a hardware loop (for levels
  /// beyond limits.max_loop_depth).
  bool unroll = false;
};

/// Which iteration is being emitted, per level (outer first).
struct NestIter {
  std::vector<bool> tail;
  std::vector<bool> first;
};

/// An address register stepped by the nest: `step[l]` is its change from
/// one iteration of level l to the next.
struct NestReg {
  int reg = 0;
  std::vector<int64_t> step;
};

struct NestHooks {
  /// Around each iteration of level l (before the inner levels / after).
  std::function<void(int level, const NestIter &)> enter, leave;
  /// One innermost iteration.
  std::function<void(const NestIter &)> body;
};

/// Emits the nest into `s`: full iterations as hardware loops (split when
/// longer than limits.max_loop_count), peeled first and tail iterations in
/// line; each register of `regs` advances by its step after every
/// iteration, net of what the inner levels added.
void emitNest(StreamBuilder &s, const std::vector<NestLevel> &levels,
              const std::vector<NestReg> &regs, const NestHooks &hooks,
              int64_t maxLoopCount);

// ------------------------------------------------------------ instructions

/// A rows x blocks piece of a StickMatrix-like region moved between memory
/// and LX. In memory the stick (r, b) is at mem + r*rowStride + b*blockStride;
/// in LX at lx + r + b*lxBlockStride (rows contiguous, blocks apart).
struct StickMove {
  int64_t rows = 1, blocks = 1;
  int64_t rowStride = 1, blockStride = 0;
  int64_t lxBlockStride = 0;
};
InstrOf<isa::Format::Load> loadSticks(Addr lx, Addr mem, const StickMove &mv);
InstrOf<isa::Format::Store> storeSticks(Addr mem, Addr lx,
                                        const StickMove &mv);

/// SFU row operands: m rows of n sticks, row strides ds/ss/s2s.
struct Rows {
  int64_t n = 1, m = 1;
  int64_t ds = 0, ss = 0, s2s = 0; ///< 0 means "row length n" for ds/ss
  int64_t count = 0;
};

/// `op dst, src` for an op of the unary, row-reduce or column-reduce family
/// (through the fields its format has). `f32` selects fmt.
InstrBuilder sfuUnary(isa::Opcode op, Addr dst, Addr src, const Rows &r,
                      bool f32);
/// `op dst, src1, src2` (binary family) with s2=row (stick = false) or
/// s2=stick.
InstrOf<isa::Format::SfuBinary> sfuBinary(isa::Opcode op, Addr dst, Addr src1,
                                          Addr src2, const Rows &r, bool stick,
                                          bool f32);
/// `op dst, src, imm` (scalar family).
InstrOf<isa::Format::SfuScalar> sfuScalar(isa::Opcode op, Addr dst, Addr src,
                                          float imm, const Rows &r, bool f32);
/// `cvt dst, src, to=...` from n source sticks per row.
InstrOf<isa::Format::Cvt> sfuCvt(Addr dst, Addr src, bool toF32,
                                 const Rows &r);

} // namespace spyre::codegen
