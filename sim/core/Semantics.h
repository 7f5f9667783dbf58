// The functional effect of every data instruction: the numbers an
// instruction computes from one core's LX and the device memory, with no
// notion of time. The timing models and the SystemC layer decide when an
// instruction runs; these functions decide what it writes.
//
// Every function takes an instruction whose address fields already hold
// effective addresses in sticks (base register + offset; the machine does
// that). Bounds are not checked here: the machine checks `footprint` against
// the LX and memory sizes before it executes anything.
//
// Numerics (the ISA table's semantics text, made precise):
// - An instruction reads all its sources before it writes any result, so a
//   destination may overlap a source (in-place ops). Where destination sticks
//   are written more than once (overlapping rows), the last write in
//   processing order wins: rows in increasing order; for mm, C blocks in
//   increasing order and rows increasing within a block.
// - mm: A and B are DL16, decoded exactly to FP32. Each C element is an FP32
//   sum over k in increasing order, starting from 0 (acc=0) or from the
//   existing C read in its format (acc=1): c = c + a[i][k] * b[k][j], each
//   product exact in FP32 (two 10-bit significands) and each sum rounded to
//   nearest even. out=dl16 rounds the final sum once (ties away from zero).
// - mmi8: INT8 A and B, INT32 sums wrapping modulo 2^32.
// - SFU: each operand element is read per fmt (DL16 exactly to FP32, the
//   special code as NaN), computed in FP32 (transcendentals by sim/numerics/
//   SfuMath, basic operations by IEEE FP32), written per fmt (DL16 by
//   dlf16::fromFloat: nearest, ties away; NaN and +-Inf to the special code).
//   With count > 0, elements of a row at index >= count (index = stick * lanes
//   + lane) are written as +0 and are not used by reductions; a count beyond
//   the row length means the whole row.
// - max/min (and relu, maxs, rmax, cmax) propagate NaN: max(a, b) is a when
//   a > b or a is NaN, else b; min(a, b) is a when a < b or a is NaN, else b.
// - rsum/rmax: the row's valid elements in element order, starting from the
//   first (acc = x0; acc = acc + x1; ...), rounded once to fmt.
// - csum/cmax: each element over rows in increasing order, starting from row
//   0, rounded once to fmt.
// - cvt: DL16 -> FP32 is exact; FP32 -> DL16 rounds as above. A destination
//   row is ceil(n * srcLanes / dstLanes) sticks; lanes past the source row's
//   end (an odd n to DL16) are written as +0.
#pragma once

#include "isa/Instr.h"
#include "sim/core/DeviceMemory.h"
#include "sim/core/Region.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sim {

/// Appends every region `resolved` reads and writes, reads first (in operand
/// order), then writes. Control and sync instructions append nothing. Ring
/// instructions give their local LX region: send/rsend read it, recv writes
/// it, racc reads and writes it.
void footprint(const isa::Instr &resolved, std::vector<Footprint> &out);

/// What is wrong with operand values that the field ranges cannot express
/// (bcast lane beyond the lanes of fmt), or an empty string. The machine
/// reports it as a finding; executeCompute requires it to be empty.
std::string operandError(const isa::Instr &resolved);
/// Whether operandError of `op` depends on its addresses (xpose: source and
/// destination must not share a stick); otherwise it depends on the other
/// fields only, and one check holds for every execution.
bool operandErrorDependsOnAddresses(isa::Opcode op);

/// Runs a PT (mm, mmi8) or SFU instruction on one core's LX; `lx` is byte 0
/// of that LX (stick s is bytes [s*128, s*128+128)).
void executeCompute(const isa::Instr &resolved, uint8_t *lx);

/// ld: copies its runs from device memory into LX, in forEachRun order.
void executeLoad(const isa::Instr &resolved, const DeviceMemory &mem,
                 uint8_t *lx);
/// st: copies its runs from LX into device memory, in forEachRun order.
void executeStore(const isa::Instr &resolved, const uint8_t *lx,
                  DeviceMemory &mem);

/// Ring payloads: the region's sticks in forEachRun order.
std::string gather(const Region &r, const uint8_t *lx);
/// Writes a payload of exactly r.sticks() * 128 bytes back in the same order.
void scatter(const Region &r, std::string_view bytes, uint8_t *lx);
/// racc: adds the payload's FP32 lanes to the region's, elementwise, sticks
/// in forEachRun order.
void accumulateF32(const Region &r, std::string_view bytes, uint8_t *lx);

} // namespace spyre::sim
