// The parameter table of the hardware config and the rules between
// parameters, plus the Markdown reference generated from them.
//
// Confidence follows docs/hardware.md#confidence: H = IBM documentation or
// torch-spyre code constants, M = one source or consistent arithmetic, L = an
// estimate. Only L-confidence details are optional; every figure that defines
// the machine must be written in each config file.
#include "hw/ConfigSchema.h"

#include "support/Diagnostic.h"
#include "support/Hash.h"

#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <set>
#include <type_traits>
#include <vector>

namespace spyre::hw {

namespace {

template <class T> constexpr ParamType paramTypeOf() {
  if constexpr (std::is_same_v<T, int>)
    return ParamType::Int;
  else if constexpr (std::is_same_v<T, int64_t>)
    return ParamType::Int64;
  else if constexpr (std::is_same_v<T, double>)
    return ParamType::Double;
  else {
    static_assert(std::is_same_v<T, std::string>, "unsupported field type");
    return ParamType::String;
  }
}

template <class T> ParamValue toValue(const T &v) {
  if constexpr (std::is_integral_v<T>)
    return ParamValue(static_cast<int64_t>(v));
  else
    return ParamValue(v);
}

template <class T> void fromValue(const ParamValue &v, T &out) {
  if constexpr (std::is_same_v<T, int>) {
    int64_t x = std::get<int64_t>(v);
    SPYRE_ASSERT(x >= INT32_MIN && x <= INT32_MAX,
                 "value out of range for a 32-bit field");
    out = static_cast<int>(x);
  } else {
    out = std::get<T>(v);
  }
}

/// Access to `config.*Section.*Member`.
template <auto Section, auto Member> constexpr FieldAccess field() {
  using SectionT =
      std::remove_cvref_t<decltype(std::declval<HwConfig &>().*Section)>;
  using T = std::remove_cvref_t<decltype(std::declval<SectionT &>().*Member)>;
  return FieldAccess{
      paramTypeOf<T>(),
      [](const HwConfig &c) { return toValue((c.*Section).*Member); },
      [](HwConfig &c, const ParamValue &v) {
        fromValue(v, (c.*Section).*Member);
      }};
}

/// Access to a top-level member `config.*Member`.
template <auto Member> constexpr FieldAccess topField() {
  using T = std::remove_cvref_t<decltype(std::declval<HwConfig &>().*Member)>;
  return FieldAccess{
      paramTypeOf<T>(), [](const HwConfig &c) { return toValue(c.*Member); },
      [](HwConfig &c, const ParamValue &v) { fromValue(v, c.*Member); }};
}

using namespace rule;
using C = HwConfig;

const SectionInfo kSections[] = {
    {"chip", "The chip as a whole: cores on the ring and the data unit."},
    {"sequencer", "The in-order sequencer in front of every engine stream: "
                  "the cost of control, scalar and sync instructions."},
    {"pt", "The matrix unit (PT) of one corelet: a weight-stationary systolic "
           "PE array."},
    {"sfu", "The vector unit (SFU) of one corelet; it streams sticks."},
    {"lx", "The LX scratchpad of one core, shared by its corelets; no cache."},
    {"dma", "The DMA engines of one core: load (memory to LX) and store (LX to "
            "memory), stick-granular."},
    {"memory", "Device memory (LPDDR5), reached by all cores through one "
               "interface on the ring."},
    {"ring", "The data ring: bidirectional, cores in core-id order, with the "
             "memory interface as one more stop."},
    {"reduce_ring", "The separate ring that carries cross-core partial sums."},
    {"limits", "Hardware limits the compiler must respect."},
    {"host", "The host link and the host's own compute."},
};

// The ranges below are what the compiler and simulator can live with, not
// what a real chip could be: each is far beyond any design point of interest
// and small enough that the sums and products formed of them stay exact.
constexpr std::string_view kCyclesReason =
    "a million cycles per event keeps every sum of latencies far inside 64 "
    "bits";
constexpr std::string_view kSizeReason =
    "far beyond any accelerator, and small enough that the products the "
    "compiler and simulator form of it stay exact";
// Rates are kept as exact fractions of figures scaled to 1e-6 of their unit
// (sim/timing/Time.h): bandwidth x clock, so scaled, must stay below 2^62.
constexpr std::string_view kClockReason =
    "10 MHz to 100 GHz: bandwidths are exact fractions of the clock "
    "(sim/timing/Time.h)";
constexpr std::string_view kServeUsReason =
    "0 to 1 s: a step's host share, far from a double's precision limits";
constexpr std::string_view kBandwidthReason =
    "10 MB/s to 10 TB/s: bandwidths are exact fractions of the clock "
    "(sim/timing/Time.h)";

const ParamInfo kSchema[] = {
    {.path = "name",
     .field = topField<&C::name>(),
     .description = "Name of this hardware configuration.",
     .rules = kIdentifier},

    // chip
    {.path = "chip.cores",
     .field = field<&C::chip, &ChipConfig::cores>(),
     .unit = "cores",
     .description = "Cores on the ring, numbered in ring order.",
     .confidence = "H",
     .source = "torch-spyre docs, architecture/spyre_accelerator.md",
     .rules = kPositive,
     .maxValue = 1024,
     .maxReason = "cores the simulator models (it keeps sync and ring state for every core)"},
    {.path = "chip.clock_ghz",
     .field = field<&C::chip, &ChipConfig::clockGhz>(),
     .unit = "GHz",
     .description = "Core clock; every cycle count in this file counts these "
                    "cycles.",
     .confidence = "L-M",
     .source = "inferred: the only clock giving the published 98.3 DL16 "
               "TFLOPS (32 x 1024 MAC x 2 x 1.5e9)",
     .rules = kPositive,
     .maxReason = kClockReason,
     .minReal = 0.01,
     .maxReal = 100.0},
    {.path = "chip.corelets_per_core",
     .field = field<&C::chip, &ChipConfig::coreletsPerCore>(),
     .unit = "corelets",
     .description = "Corelets per core, each with a PT and an SFU; they share "
                    "the core's LX.",
     .confidence = "H",
     .source = "torch-spyre docs, architecture/spyre_accelerator.md",
     .rules = kPositive,
     .maxValue = 64,
     .maxReason = kSizeReason},
    {.path = "chip.stick_bytes",
     .field = field<&C::chip, &ChipConfig::stickBytes>(),
     .unit = "bytes",
     .description = "Size and alignment of a stick, the data unit of LX, DMA "
                    "and layouts. Not a parameter: the instruction set fixes "
                    "it, and a config may only restate it.",
     .confidence = "H",
     .source = "torch-spyre BYTES_IN_STICK = 128",
     .rules = kFixed,
     .maxValue = 128,
     .maxReason = "fixed by the instruction set (isa::kStickBytes): its "
                  "addresses, strides and lane counts are in 128-byte "
                  "sticks"},

    // sequencer
    {.path = "sequencer.ctrl_cycles",
     .field = field<&C::sequencer, &SequencerConfig::ctrlCycles>(),
     .unit = "cycles",
     .description = "Issue cost of nop and loop.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "sequencer.scalar_cycles",
     .field = field<&C::sequencer, &SequencerConfig::scalarCycles>(),
     .unit = "cycles",
     .description = "Issue cost of li and addi (address arithmetic).",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "sequencer.sync_cycles",
     .field = field<&C::sequencer, &SequencerConfig::syncCycles>(),
     .unit = "cycles",
     .description = "Cost of signal, of a satisfied wait and of a barrier "
                    "release, and the latency of a signal to a counter of "
                    "its own core (remote counters add ring hops).",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},

    // pt
    {.path = "pt.pe_rows",
     .field = field<&C::pt, &PtConfig::peRows>(),
     .unit = "PEs",
     .description = "Rows of the PE array.",
     .confidence = "H",
     .source = "torch-spyre docs: 8 x 8 systolic PE array per corelet",
     .rules = kPositive,
     .maxValue = 1024,
     .maxReason = kSizeReason},
    {.path = "pt.pe_cols",
     .field = field<&C::pt, &PtConfig::peCols>(),
     .unit = "PEs",
     .description = "Columns of the PE array.",
     .confidence = "H",
     .source = "torch-spyre docs: 8 x 8 systolic PE array per corelet",
     .rules = kPositive,
     .maxValue = 1024,
     .maxReason = kSizeReason},
    {.path = "pt.simd_width",
     .field = field<&C::pt, &PtConfig::simdWidth>(),
     .unit = "lanes",
     .description = "SIMD lanes per PE; DL16 MAC/cycle of a corelet = pe_rows "
                    "x pe_cols x simd_width.",
     .confidence = "M",
     .source = "arithmetic: 512 MAC/cycle/corelet gives the published peak",
     .rules = kPositive,
     .maxValue = 1024,
     .maxReason = kSizeReason},
    {.path = "pt.pass_rows",
     .field = field<&C::pt, &PtConfig::passRows>(),
     .unit = "rows",
     .description = "Rows of M streamed through the array in one pass.",
     .confidence = "M",
     .source = "docs/hardware.md#corelets-and-the-pt",
     .rules = kPositive,
     .maxValue = 65536,
     .maxReason = kSizeReason},
    {.path = "pt.full_rate_passes",
     .field = field<&C::pt, &PtConfig::fullRatePasses>(),
     .unit = "passes",
     .description = "Passes one instruction needs to reach full rate; fewer "
                    "run at about sqrt(passes / full_rate_passes) of it.",
     .confidence = "M",
     .source = "docs/hardware.md#corelets-and-the-pt",
     .rules = kPositive,
     .maxValue = 65536,
     .maxReason = kSizeReason},
    {.path = "pt.int8_speedup",
     .field = field<&C::pt, &PtConfig::int8Speedup>(),
     .unit = "x",
     .description = "INT8/FP8 MAC rate as a multiple of the DL16 rate.",
     .confidence = "M",
     .source = "docs/hardware.md#corelets-and-the-pt",
     .rules = kPositive,
     .maxValue = 64,
     .maxReason = kSizeReason},
    {.path = "pt.int4_speedup",
     .field = field<&C::pt, &PtConfig::int4Speedup>(),
     .unit = "x",
     .description = "INT4 MAC rate as a multiple of the DL16 rate.",
     .confidence = "M",
     .source = "docs/hardware.md#corelets-and-the-pt",
     .rules = kPositive,
     .maxValue = 64,
     .maxReason = kSizeReason},
    {.path = "pt.setup_cycles",
     .field = field<&C::pt, &PtConfig::setupCycles>(),
     .unit = "cycles",
     .description = "Fixed cost of each PT instruction (loading weights into "
                    "the array).",
     .confidence = "L",
     .source = "estimate: one array row per cycle",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},

    // sfu
    {.path = "sfu.arrays_per_corelet",
     .field = field<&C::sfu, &SfuConfig::arraysPerCorelet>(),
     .unit = "arrays",
     .description = "1-D vector arrays of one corelet; a corelet's SFU "
                    "stream spreads each instruction's elements over them.",
     .confidence = "H",
     .source = "IBM Research blog, Lifting the cover on the IBM Spyre "
               "Accelerator (two 1-D vector arrays per corelet)",
     .required = false,
     .rules = kPositive,
     .maxValue = 64,
     .maxReason = kSizeReason},
    {.path = "sfu.dl16_lanes",
     .field = field<&C::sfu, &SfuConfig::dl16Lanes>(),
     .unit = "elements",
     .description = "DL16 elements one array takes in one pass (64: a DL16 "
                    "stick).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .required = false,
     .rules = kPositive,
     .maxValue = 4096,
     .maxReason = kSizeReason},
    {.path = "sfu.fp32_lanes",
     .field = field<&C::sfu, &SfuConfig::fp32Lanes>(),
     .unit = "elements",
     .description = "FP32 elements one array takes in one pass (64: two FP32 "
                    "sticks; the arrays compute in FP32).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .required = false,
     .rules = kPositive,
     .maxValue = 4096,
     .maxReason = kSizeReason},
    {.path = "sfu.simple_cycles_per_stick",
     .field = field<&C::sfu, &SfuConfig::simpleCyclesPerStick>(),
     .unit = "cycles/pass",
     .description = "Add, mul, max, copy, convert and the like: cycles "
                    "between passes of one array (throughput).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "sfu.transcendental_cycles_per_stick",
     .field = field<&C::sfu, &SfuConfig::transcendentalCyclesPerStick>(),
     .unit = "cycles/pass",
     .description = "Exp, rsqrt, reciprocal, gelu, sigmoid, tanh: cycles "
                    "between passes of one array (throughput; pipelined).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "sfu.reduce_cycles_per_stick",
     .field = field<&C::sfu, &SfuConfig::reduceCyclesPerStick>(),
     .unit = "cycles/pass",
     .description = "A reduction across the lanes of a pass (sum, max): "
                    "cycles between passes (throughput; pipelined tree).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .required = false,
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "sfu.pipeline_latency_cycles",
     .field = field<&C::sfu, &SfuConfig::pipelineLatencyCycles>(),
     .unit = "cycles",
     .description = "From issue to the first result of a simple op or a "
                    "reduction (latency).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "sfu.transcendental_latency_cycles",
     .field = field<&C::sfu, &SfuConfig::transcendentalLatencyCycles>(),
     .unit = "cycles",
     .description = "From issue to the first result of a transcendental op "
                    "(latency of the pipelined function units).",
     .confidence = "L",
     .source = "docs/hardware.md#sfu",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},

    // lx
    {.path = "lx.size_bytes",
     .field = field<&C::lx, &LxConfig::sizeBytes>(),
     .unit = "bytes",
     .description = "LX capacity of one core.",
     .confidence = "H",
     .source = "torch-spyre docs: 2 MB LX scratchpad per core",
     .rules = kPositive | kWholeSticks,
     .maxValue = 67108864,
     .maxReason = "what the ISA's LX offsets address: 20-bit signed counts of 128-byte sticks"},
    {.path = "lx.read_sticks_per_cycle",
     .field = field<&C::lx, &LxConfig::readSticksPerCycle>(),
     .unit = "sticks/cycle",
     .description = "Sticks one corelet port reads per cycle.",
     .confidence = "L",
     .source = "docs/hardware.md#lx",
     .rules = kPositive,
     .maxValue = 1024,
     .maxReason = kSizeReason},
    {.path = "lx.write_sticks_per_cycle",
     .field = field<&C::lx, &LxConfig::writeSticksPerCycle>(),
     .unit = "sticks/cycle",
     .description = "Sticks one corelet port writes per cycle.",
     .confidence = "L",
     .source = "docs/hardware.md#lx",
     .rules = kPositive,
     .maxValue = 1024,
     .maxReason = kSizeReason},

    // dma
    {.path = "dma.max_outstanding",
     .field = field<&C::dma, &DmaConfig::maxOutstanding>(),
     .unit = "runs",
     .description = "Contiguous stick runs one engine keeps in flight.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive,
     .maxValue = 65536,
     .maxReason = kSizeReason},
    {.path = "dma.issue_latency_cycles",
     .field = field<&C::dma, &DmaConfig::issueLatencyCycles>(),
     .unit = "cycles",
     .description = "From issuing a request to it reaching the memory "
                    "interface.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "dma.run_setup_cycles",
     .field = field<&C::dma, &DmaConfig::runSetupCycles>(),
     .unit = "cycles",
     .description = "Extra cost of starting each contiguous run; it makes "
                    "scattered sticks dearer than long runs.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "dma.burst_bytes",
     .field = field<&C::dma, &DmaConfig::burstBytes>(),
     .unit = "bytes",
     .description = "Longest piece of a contiguous run that one request moves; "
                    "longer runs are split so the engines of all cores "
                    "interleave at the memory interface.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive | kWholeSticks,
     .maxValue = 16777216,
     .maxReason = kSizeReason},
    {.path = "dma.max_dims",
     .field = field<&C::dma, &DmaConfig::maxDims>(),
     .unit = "dims",
     .description = "Dimensions one DMA descriptor can walk.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive,
     .maxValue = 16,
     .maxReason = kSizeReason},

    // memory
    {.path = "memory.size_bytes",
     .field = field<&C::memory, &MemoryConfig::sizeBytes>(),
     .unit = "bytes",
     .description = "Device address space; only the sticks touched are "
                    "allocated.",
     .confidence = "H",
     .source = "torch-spyre docs: up to 128 GB LPDDR5 per card",
     .rules = kPositive | kWholeSticks,
     .maxValue = 17592186044416,
     .maxReason = "16 TiB: device addresses, and the time to move the whole memory, stay far inside 64 bits"},
    {.path = "memory.peak_gb_per_s",
     .field = field<&C::memory, &MemoryConfig::peakGBps>(),
     .unit = "GB/s",
     .description = "Interface peak bandwidth, shared by all cores.",
     .confidence = "H",
     .source = "docs/hardware.md#device-memory",
     .rules = kPositive,
     .maxReason = kBandwidthReason,
     .minReal = 0.01,
     .maxReal = 10000.0},
    {.path = "memory.sustained_read_gb_per_s",
     .field = field<&C::memory, &MemoryConfig::sustainedReadGBps>(),
     .unit = "GB/s",
     .description = "Sustained one-way streaming (read-only or write-only), "
                    "all cores.",
     .confidence = "H",
     .source = "torch-spyre cost_model.py, measured",
     .rules = kPositive,
     .maxReason = kBandwidthReason,
     .minReal = 0.01,
     .maxReal = 10000.0},
    {.path = "memory.sustained_mixed_gb_per_s",
     .field = field<&C::memory, &MemoryConfig::sustainedMixedGBps>(),
     .unit = "GB/s",
     .description = "Sustained streaming with reads and writes balanced.",
     .confidence = "H",
     .source = "torch-spyre cost_model.py, measured",
     .rules = kPositive,
     .maxReason = kBandwidthReason,
     .minReal = 0.01,
     .maxReal = 10000.0},
    {.path = "memory.turnaround_cycles",
     .field = field<&C::memory, &MemoryConfig::turnaroundCycles>(),
     .unit = "cycles",
     .description = "Extra cycles each time the bus switches between "
                    "reading and writing, on top of the mixed rate, which "
                    "already includes the switching cost: 0 for the "
                    "published figure, more to model a controller that "
                    "switches more often.",
     .confidence = "L",
     .source = "design-space knob on top of the measured mixed rate; 0 reproduces the published figures",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "memory.latency_cycles",
     .field = field<&C::memory, &MemoryConfig::latencyCycles>(),
     .unit = "cycles",
     .description = "From a request reaching memory to its first data.",
     .confidence = "L",
     .source = "estimate: about 100 ns, typical of LPDDR5",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},

    // ring
    {.path = "ring.bytes_per_cycle",
     .field = field<&C::ring, &RingConfig::bytesPerCycle>(),
     .unit = "B/cycle",
     .description = "Bandwidth of one link in one direction.",
     .confidence = "H",
     .source = "torch-spyre docs: 128 B per cycle per direction",
     .rules = kPositive,
     .maxValue = 1048576,
     .maxReason = kSizeReason},
    {.path = "ring.hop_latency_cycles",
     .field = field<&C::ring, &RingConfig::hopLatencyCycles>(),
     .unit = "cycles",
     .description = "Latency of one hop between neighbouring stops.",
     .confidence = "L",
     .source = "docs/hardware.md#data-ring (about 1-2 cycles)",
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "ring.memory_node_position",
     .field = field<&C::ring, &RingConfig::memoryNodePosition>(),
     .unit = "core id",
     .description = "The memory interface's stop sits just before this core "
                    "on the ring.",
     .confidence = "L",
     .source = "estimate; the topology is not published",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1023,
     .maxReason = "the last core of the largest chip (chip.cores <= 1024)"},

    // reduce_ring
    {.path = "reduce_ring.bytes_per_cycle",
     .field = field<&C::reduceRing, &ReduceRingConfig::bytesPerCycle>(),
     .unit = "B/cycle",
     .description = "Bandwidth of one link.",
     .confidence = "L",
     .source = "docs/hardware.md#reduce-ring (it exists: H; its width: L)",
     .rules = kPositive,
     .maxValue = 1048576,
     .maxReason = kSizeReason},
    {.path = "reduce_ring.hop_latency_cycles",
     .field = field<&C::reduceRing, &ReduceRingConfig::hopLatencyCycles>(),
     .unit = "cycles",
     .description = "Latency of one hop.",
     .confidence = "L",
     .source = "estimate, as the data ring",
     .required = false,
     .rules = kPositive,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},

    // limits
    {.path = "limits.tensor_span_bytes_per_core",
     .field = field<&C::limits, &LimitsConfig::tensorSpanBytesPerCore>(),
     .unit = "bytes",
     .description = "Device-memory span of one tensor that one core can "
                    "address.",
     .confidence = "H",
     .source = "torch-spyre docs: 255.996 MiB per core (rounded to 256 MiB)",
     .rules = kPositive | kWholeSticks,
     .maxValue = 17592186044416,
     .maxReason = "the largest memory.size_bytes"},
    {.path = "limits.max_loop_count",
     .field = field<&C::limits, &LimitsConfig::maxLoopCount>(),
     .unit = "iterations",
     .description = "Trip count of one hardware loop.",
     .confidence = "H",
     .source = "docs/hardware.md#limits",
     .rules = kPositive,
     .maxValue = 65535,
     .maxReason = "the largest count the 16-bit loop field of the ISA holds"},
    {.path = "limits.max_loop_depth",
     .field = field<&C::limits, &LimitsConfig::maxLoopDepth>(),
     .unit = "loops",
     .description = "Nested hardware loops in one engine stream.",
     .confidence = "L",
     .source = "docs/hardware.md#limits (a few levels)",
     .rules = kPositive,
     .maxValue = 16,
     .maxReason = "the loop frames the simulator keeps per stream "
                  "(sim/core/Machine.h)"},
    {.path = "limits.sync_counters_per_core",
     .field = field<&C::limits, &LimitsConfig::syncCountersPerCore>(),
     .unit = "counters",
     .description = "Signal/wait counters of one core.",
     .confidence = "L",
     .source = "estimate",
     .rules = kPositive,
     .maxValue = 256,
     .maxReason = "what the ISA's 8-bit counter field addresses"},
    {.path = "limits.barriers",
     .field = field<&C::limits, &LimitsConfig::barriers>(),
     .unit = "barriers",
     .description = "Barrier ids on the chip.",
     .confidence = "L",
     .source = "estimate",
     .rules = kPositive,
     .maxValue = 256,
     .maxReason = "what the ISA's 8-bit barrier id field addresses"},

    // host
    {.path = "host.pcie_gb_per_s",
     .field = field<&C::host, &HostConfig::pcieGBps>(),
     .unit = "GB/s",
     .description = "Host link bandwidth in each direction.",
     .confidence = "H",
     .source = "torch-spyre docs: PCIe Gen5 x16 (32 GT/s x 16 x 128/130 / 8)",
     .rules = kPositive,
     .maxReason = kBandwidthReason,
     .minReal = 0.01,
     .maxReal = 10000.0},
    {.path = "host.pcie_latency_cycles",
     .field = field<&C::host, &HostConfig::pcieLatencyCycles>(),
     .unit = "cycles",
     .description = "Fixed cost of one host transfer.",
     .confidence = "L",
     .source = "estimate: about 1 us",
     .required = false,
     .rules = kNonNegative,
     .maxValue = 1000000,
     .maxReason = kCyclesReason},
    {.path = "host.host_gflops",
     .field = field<&C::host, &HostConfig::hostGflops>(),
     .unit = "GFLOP/s",
     .description = "Compute rate of the host for ops that fall back to it.",
     .confidence = "L",
     .source = "estimate",
     .required = false,
     .rules = kPositive,
     .maxReason = "10 MFLOP/s to 1 EFLOP/s: host time in cycles stays far inside 64 bits",
     .minReal = 0.01,
     .maxReal = 1000000000.0},
    {.path = "host.step_overhead_us",
     .field = field<&C::host, &HostConfig::stepOverheadUs>(),
     .unit = "us",
     .description = "Host time of one serving step besides sampling: "
                    "scheduling, building the step's inputs, dispatch.",
     .confidence = "L",
     .source = "estimate: a Python scheduler and input preparation, a few "
               "hundred microseconds per step",
     .required = false,
     .rules = kNonNegative,
     .maxReason = kServeUsReason,
     .minReal = 0.0,
     .maxReal = 1000000.0},
    {.path = "host.sample_us_per_sequence",
     .field = field<&C::host, &HostConfig::sampleUsPerSequence>(),
     .unit = "us",
     .description = "Host time to sample one sequence's next token from its "
                    "logits.",
     .confidence = "L",
     .source = "estimate: a pass over a vocabulary of about 50,000 logits",
     .required = false,
     .rules = kNonNegative,
     .maxReason = kServeUsReason,
     .minReal = 0.0,
     .maxReal = 1000000.0},
    {.path = "host.launch_us",
     .field = field<&C::host, &HostConfig::launchUs>(),
     .unit = "us",
     .description = "Host time to start one program on the card and learn "
                    "that it ended (driver call, command submission, "
                    "doorbell, completion); charged once per program run.",
     .confidence = "L",
     .source = "estimate: no public figure for Spyre; about 10 us, the "
               "order of a GPU kernel launch through its driver (3-10 us) "
               "plus a few PCIe round trips",
     .required = false,
     .rules = kNonNegative,
     .maxReason = kServeUsReason,
     .minReal = 0.0,
     .maxReal = 1000000.0},
};

std::string fmtDouble(double v) { return formatValue(ParamValue(v)); }
std::string fmtInt(int64_t v) { return std::to_string(v); }

const CrossRule kCrossRules[] = {
    {"memory.sustained_read_gb_per_s",
     {"memory.sustained_read_gb_per_s", "memory.peak_gb_per_s"},
     "`memory.sustained_read_gb_per_s` <= `memory.peak_gb_per_s`",
     [](const C &c) -> std::optional<std::string> {
       if (c.memory.sustainedReadGBps <= c.memory.peakGBps)
         return std::nullopt;
       return fmtDouble(c.memory.sustainedReadGBps) +
              " GB/s is above memory.peak_gb_per_s (" +
              fmtDouble(c.memory.peakGBps) + " GB/s)";
     }},
    {"memory.sustained_mixed_gb_per_s",
     {"memory.sustained_mixed_gb_per_s", "memory.sustained_read_gb_per_s"},
     "`memory.sustained_mixed_gb_per_s` <= `memory.sustained_read_gb_per_s` "
     "(bus turnarounds only cost)",
     [](const C &c) -> std::optional<std::string> {
       if (c.memory.sustainedMixedGBps <= c.memory.sustainedReadGBps)
         return std::nullopt;
       return fmtDouble(c.memory.sustainedMixedGBps) +
              " GB/s is above memory.sustained_read_gb_per_s (" +
              fmtDouble(c.memory.sustainedReadGBps) +
              " GB/s); turnarounds make mixed traffic slower, not faster";
     }},
    {"ring.memory_node_position",
     {"ring.memory_node_position", "chip.cores"},
     "`ring.memory_node_position` < `chip.cores`",
     [](const C &c) -> std::optional<std::string> {
       if (c.ring.memoryNodePosition < c.chip.cores)
         return std::nullopt;
       return fmtInt(c.ring.memoryNodePosition) + " is outside 0.." +
              fmtInt(c.chip.cores - 1) + " (chip.cores is " +
              fmtInt(c.chip.cores) + ")";
     }},
    {"lx.size_bytes",
     {"lx.size_bytes", "chip.stick_bytes", "chip.corelets_per_core"},
     "`lx.size_bytes` holds at least one stick per corelet",
     [](const C &c) -> std::optional<std::string> {
       int64_t need = int64_t{c.chip.stickBytes} * c.chip.coreletsPerCore;
       if (c.lx.sizeBytes >= need)
         return std::nullopt;
       return fmtInt(c.lx.sizeBytes) + " bytes is less than one " +
              fmtInt(c.chip.stickBytes) + "-byte stick per corelet (" +
              fmtInt(c.chip.coreletsPerCore) + " corelets)";
     }},
    {"limits.tensor_span_bytes_per_core",
     {"limits.tensor_span_bytes_per_core", "memory.size_bytes"},
     "`limits.tensor_span_bytes_per_core` <= `memory.size_bytes`",
     [](const C &c) -> std::optional<std::string> {
       if (c.limits.tensorSpanBytesPerCore <= c.memory.sizeBytes)
         return std::nullopt;
       return fmtInt(c.limits.tensorSpanBytesPerCore) +
              " bytes is more than memory.size_bytes (" +
              fmtInt(c.memory.sizeBytes) + ")";
     }},
    {"pt.pe_rows",
     {"pt.pe_rows", "pt.pe_cols", "pt.simd_width", "chip.corelets_per_core",
      "chip.cores"},
     "the chip's MAC/cycle, `pt.pe_rows` x `pt.pe_cols` x `pt.simd_width` x "
     "`chip.corelets_per_core` x `chip.cores`, is at most 2^31 - 1",
     [](const C &c) -> std::optional<std::string> {
       // Each factor is at most 1024, so the product fits in 64 bits; the
       // compiler and the statistics count MACs of a cycle in an int.
       const int64_t macs = int64_t{c.pt.peRows} * c.pt.peCols *
                            c.pt.simdWidth * c.chip.coreletsPerCore *
                            c.chip.cores;
       if (macs <= INT32_MAX)
         return std::nullopt;
       return "the chip's MAC/cycle, " + fmtInt(c.pt.peRows) + " x " +
              fmtInt(c.pt.peCols) + " x " + fmtInt(c.pt.simdWidth) +
              " (pt.pe_rows x pt.pe_cols x pt.simd_width) x " +
              fmtInt(c.chip.coreletsPerCore) + " corelets x " +
              fmtInt(c.chip.cores) + " cores = " + fmtInt(macs) +
              ", is above 2147483647";
     }},
    {"pt.int4_speedup",
     {"pt.int4_speedup", "pt.int8_speedup"},
     "`pt.int4_speedup` >= `pt.int8_speedup`",
     [](const C &c) -> std::optional<std::string> {
       if (c.pt.int4Speedup >= c.pt.int8Speedup)
         return std::nullopt;
       return fmtInt(c.pt.int4Speedup) + " is below pt.int8_speedup (" +
              fmtInt(c.pt.int8Speedup) + "); narrower data is never slower";
     }},
};

/// The tables are code: a mistake in them is a bug, caught on first use.
void checkTables() {
  std::set<std::string_view> paths, closedSections;
  std::string_view current;
  for (const ParamInfo &p : kSchema) {
    SPYRE_ASSERT(paths.insert(p.path).second,
                 "duplicate schema key " + std::string(p.path));
    SPYRE_ASSERT(p.path.find('.') == p.path.rfind('.'),
                 "schema keys are at most one level deep");
    SPYRE_ASSERT(!p.description.empty(), "schema key without description");
    SPYRE_ASSERT(p.source.empty() == p.confidence.empty(),
                 "schema key with a source but no confidence, or back");
    std::string_view section = sectionOf(p.path);
    if (section != current) {
      SPYRE_ASSERT(closedSections.insert(current).second,
                   "schema section split: " + std::string(section));
      current = section;
    }
    SPYRE_ASSERT(section.empty() || findSection(section),
                 "schema section not declared: " + std::string(section));
    SPYRE_ASSERT(!(p.rules & kWholeSticks) || p.field.type != ParamType::Double,
                 "whole-stick rule on a double");
    SPYRE_ASSERT(p.field.type == ParamType::String || !p.maxReason.empty(),
                 "schema number without a range: " + std::string(p.path));
    // A double's range is positive unless it says it may be 0 (a cost that
    // can be switched off), so no rate read from the config divides by 0.
    SPYRE_ASSERT(p.field.type != ParamType::Double ||
                     ((p.minReal > 0 || (p.minReal == 0 &&
                                         (p.rules & kNonNegative))) &&
                      p.minReal < p.maxReal),
                 "schema double without a positive range: " +
                     std::string(p.path));
  }
  for (const CrossRule &r : kCrossRules)
    for (std::string_view use : r.uses)
      SPYRE_ASSERT(use.empty() || paths.count(use),
                   "cross rule uses unknown key " + std::string(use));
}

} // namespace

std::span<const ParamInfo> configSchema() {
  static const bool checked = (checkTables(), true);
  (void)checked;
  return kSchema;
}

std::span<const SectionInfo> configSections() { return kSections; }

std::span<const CrossRule> configCrossRules() { return kCrossRules; }

const ParamInfo *findParam(std::string_view path) {
  for (const ParamInfo &p : configSchema())
    if (p.path == path)
      return &p;
  return nullptr;
}

const SectionInfo *findSection(std::string_view name) {
  for (const SectionInfo &s : kSections)
    if (s.name == name)
      return &s;
  return nullptr;
}

void setParam(HwConfig &config, std::string_view key, const ParamValue &value,
              const std::string &where) {
  const ParamInfo *p = findParam(key);
  const SourceLoc loc{where, 0, 0, std::string(key)};
  if (!p)
    throw UserError(loc,
                    "unknown config key (keys as `spyre config show` prints "
                    "them, e.g. lx.size_bytes)",
                    ExitCode::Usage);
  const std::string given = formatValue(value);
  auto wrongType = [&](const char *expected) {
    return UserError(loc, std::string("takes ") + expected + ", got " + given,
                     ExitCode::Usage);
  };
  switch (p->field.type) {
  case ParamType::Int:
  case ParamType::Int64: {
    const int64_t *i = std::get_if<int64_t>(&value);
    if (!i)
      throw wrongType("an integer");
    if (p->field.type == ParamType::Int && (*i < INT32_MIN || *i > INT32_MAX))
      throw UserError(loc, given + " does not fit in a 32-bit integer",
                      ExitCode::Usage);
    p->field.set(config, value);
    return;
  }
  case ParamType::Double: {
    if (const int64_t *i = std::get_if<int64_t>(&value)) {
      p->field.set(config, ParamValue(static_cast<double>(*i)));
      return;
    }
    const double *d = std::get_if<double>(&value);
    if (!d || !std::isfinite(*d))
      throw wrongType("a finite number");
    p->field.set(config, value);
    return;
  }
  case ParamType::String:
    if (!std::holds_alternative<std::string>(value))
      throw wrongType("a string");
    p->field.set(config, value);
    return;
  }
  SPYRE_UNREACHABLE("parameter type");
}

namespace {

bool isPlainName(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0])))
    return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' &&
        ch != '_' && ch != '-')
      return false;
  return true;
}

std::string quoteString(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\')
      out += std::string("\\") + ch;
    else if (byte < 0x20 || byte == 0x7f)
      out += "\\x" + toHex(byte, 2);
    else
      out += ch;
  }
  return out + "\"";
}

std::string formatDouble(double v) {
  // std::to_chars without a precision gives the shortest text that reads back
  // to the same double, identically on every platform.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  SPYRE_ASSERT(ec == std::errc(), "to_chars failed");
  std::string s(buf, end);
  // Keep a double visibly a double ("150.0", not "150").
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

/// Markdown table cells must not contain a bare '|'.
std::string cell(std::string_view text) {
  std::string out;
  for (char ch : text)
    out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

} // namespace

bool isConfigName(std::string_view s) { return isPlainName(s); }

std::string formatValue(const ParamValue &value) {
  if (const auto *i = std::get_if<int64_t>(&value))
    return std::to_string(*i);
  if (const auto *d = std::get_if<double>(&value))
    return formatDouble(*d);
  const std::string &s = std::get<std::string>(value);
  return isPlainName(s) ? s : quoteString(s);
}

std::string_view typeName(ParamType type) {
  switch (type) {
  case ParamType::Int:
    return "int";
  case ParamType::Int64:
    return "int64";
  case ParamType::Double:
    return "double";
  case ParamType::String:
    return "string";
  }
  SPYRE_UNREACHABLE("bad ParamType");
}

std::string describeRules(const ParamInfo &p) {
  std::vector<std::string> parts;
  if (p.rules & kPositive)
    parts.emplace_back("> 0");
  if (p.rules & kNonNegative)
    parts.emplace_back(">= 0");
  if (p.rules & kMultipleOf4)
    parts.emplace_back("multiple of 4");
  if (p.rules & kPowerOfTwo)
    parts.emplace_back("power of two");
  if (p.rules & kWholeSticks)
    parts.emplace_back("whole sticks");
  if (!p.maxReason.empty() && p.field.type == ParamType::Double)
    parts.emplace_back(formatValue(ParamValue(p.minReal)) + " to " +
                       formatValue(ParamValue(p.maxReal)));
  else if ((p.rules & kFixed) != 0)
    parts.emplace_back("= " + std::to_string(p.maxValue) + " (fixed)");
  else if (!p.maxReason.empty())
    parts.emplace_back("<= " + std::to_string(p.maxValue));
  if (p.rules & kIdentifier)
    parts.emplace_back("letters, digits, `.` `_` `-`");
  std::string out;
  for (const std::string &part : parts)
    out += (out.empty() ? "" : ", ") + part;
  return out;
}

std::string configReferenceMarkdown() {
  const HwConfig &builtin = builtinConfig();
  std::string out;
  std::string_view current = "-";
  for (const ParamInfo &p : configSchema()) {
    std::string_view section = sectionOf(p.path);
    if (section != current) {
      current = section;
      if (!out.empty())
        out += "\n";
      if (section.empty())
        out += "### Top level\n\n`" + std::string(kBaseKey) +
               "` (optional): `default` or a config file, relative to the "
               "folder of the file naming it, that this file is written "
               "over; every key left out takes its value there (\"Layers\" "
               "above). Without it, a key marked \"error\" below must be "
               "written.\n\n";
      else
        out += "### `" + std::string(section) + "`\n\n" +
               std::string(findSection(section)->description) + "\n\n";
      out += "| key | type | unit | built-in | checks | if omitted, without a "
             "base | meaning "
             "| source (confidence) |\n"
             "|---|---|---|---|---|---|---|---|\n";
    }
    out += "| `" + std::string(p.path) + "` | " +
           std::string(typeName(p.field.type)) + " | " + cell(p.unit) + " | " +
           cell(formatValue(p.field.get(builtin))) + " | " + describeRules(p) +
           " | " + (p.required ? "error" : "built-in value") + " | " +
           cell(p.description) + " | " +
           (p.source.empty()
                ? std::string("-")
                : cell(p.source) + " (" + std::string(p.confidence) + ")") +
           " |\n";
  }
  out += "\n### Rules between keys\n\n";
  for (const CrossRule &r : configCrossRules())
    out += "- " + std::string(r.summary) + "\n";
  return out;
}

} // namespace spyre::hw
