// Calibration programs, their timing-only runs and the calibration table
// (see Calibration.h).
#include "sim/calibration/Calibration.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/codegen/ProgramBuilder.h"
#include "isa/Assembler.h"
#include "sim/core/Machine.h"
#include "support/Diagnostic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace spyre::sim::calibration {

namespace {

// Published figures (docs/hardware.md#measured-figures). They are the values
// the model is compared with, never inputs of the model.
//
// Pointwise streaming measured by IBM, torch-spyre cost_model.py
// (CostParams.bw_peak_gbps; balanced read/write lands at ~105 GB/s).
constexpr double kOneWayGBps = 150.0;
constexpr double kMixedGBps = 105.0;
// DL16 peak: 98.3 TFLOPS for 32 cores = 1024 MAC/cycle/core at 1.5 GHz.
constexpr double kPeakDl16MacPerNs = 1536.0;
// The whole-kernel sustained large matmul, torch-spyre cost_model.py
// (CostParams.mac_peak_per_core_ns).
constexpr double kSustainedMatmulMacPerNs = 1140.0;
// Ring link: 128 B/cycle per direction (torch-spyre docs) at 1.5 GHz.
constexpr double kRingLinkGBps = 192.0;
// LX-to-LX relayout per core, torch-spyre cost_model.py
// (CostParams.relayout_span_gbps).
constexpr double kRelayoutGBps = 547.0;
// Restickify (a transpose that swaps the stick dim) through device memory,
// read plus written bytes, torch-spyre cost_model.py
// (CostParams.bw_restickify_gbps).
constexpr double kRestickifyGBps = 116.0;
// Rows of M per PT pass and passes for full rate
// (docs/hardware.md#corelets-and-the-pt): the short-M law published values
// follow, min(1, sqrt(passes / 8)).
constexpr uint64_t kPublishedPassRows = 8;
constexpr uint64_t kPublishedFullRatePasses = 8;

isa::Program assembleOrDie(const std::string &text, const std::string &name,
                           const hw::HwConfig &config) {
  DiagnosticEngine diags;
  isa::Program program = isa::assemble(text, name, config, diags);
  SPYRE_ASSERT(!diags.hasErrors(),
               "a generated calibration program does not assemble: " +
                   diags.str());
  return program;
}

std::string hex(int64_t value) { return fmt::format("{:#x}", value); }

/// LX sticks of one PT operand set under mm's default layouts (docs/isa.md):
/// A is sticked on K, B and C on N; C is FP32 (INT32 for mmi8), 32 per stick.
struct PtLayout {
  int64_t a = 0, b = 0, c = 0;
};

PtLayout ptLayout(const PtSpec &spec) {
  const uint64_t inLanes = spec.int8 ? 128 : 64;
  SPYRE_ASSERT(spec.k % inLanes == 0 && spec.n % inLanes == 0,
               "PT operand not a whole number of sticks");
  return {static_cast<int64_t>(spec.k / inLanes * spec.m),
          static_cast<int64_t>(spec.n / inLanes * spec.k),
          static_cast<int64_t>(spec.n / 32 * spec.m)};
}

/// Both corelets read the same A and B and write their own C.
int64_t ptLxSticks(const PtSpec &spec, int corelets) {
  const PtLayout l = ptLayout(spec);
  return l.a + l.b + corelets * l.c;
}

} // namespace

double Measurement::perNs(const hw::HwConfig &config) const {
  SPYRE_ASSERT(cycles > 0, "a measurement of zero cycles");
  return static_cast<double>(work) / static_cast<double>(cycles) *
         config.chip.clockGhz;
}

// ------------------------------------------------------------ programs

isa::Program streamingProgram(const hw::HwConfig &config,
                              const StreamingSpec &spec) {
  SPYRE_ASSERT(spec.cores > 0 && spec.cores <= config.chip.cores,
               "streaming over more cores than the chip has");
  SPYRE_ASSERT(spec.sticksPerInstr > 0 && spec.instrsPerEngine > 0,
               "empty streaming program");
  // The store engine reads the upper half of LX while loads fill the lower.
  const int64_t storeBuffer = config.lxSticks() / 2;
  SPYRE_ASSERT(spec.sticksPerInstr <= storeBuffer,
               "a streaming instruction larger than half of LX");
  const int64_t perEngine = spec.sticksPerInstr * spec.instrsPerEngine;
  const bool mixed = spec.kind == StreamKind::Mixed;

  std::string text = fmt::format(".program \"stream_{}_{}\"\n",
                                 mixed ? "mixed" : "oneway", spec.cores);
  // Each core owns 2 * perEngine sticks of device memory: its input, then
  // its output.
  for (int c = 0; c < spec.cores; ++c) {
    const int64_t base = 2 * perEngine * c;
    text += fmt::format(".tensor input in{} dl16 [{}, 64] @ {}\n", c, perEngine,
                        hex(base));
    if (mixed)
      text += fmt::format(".tensor output out{} dl16 [{}, 64] @ {}\n", c,
                          perEngine, hex(base + perEngine));
  }
  for (int c = 0; c < spec.cores; ++c) {
    const int64_t base = 2 * perEngine * c;
    text += fmt::format(".core {}\n.engine dma.load\n", c);
    for (int i = 0; i < spec.instrsPerEngine; ++i)
      text +=
          fmt::format("    ld 0x0, {}, run={}\n",
                      hex(base + i * spec.sticksPerInstr), spec.sticksPerInstr);
    text += "    halt\n";
    if (!mixed)
      continue;
    text += ".engine dma.store\n";
    for (int i = 0; i < spec.instrsPerEngine; ++i)
      text += fmt::format("    st {}, {}, run={}\n",
                          hex(base + perEngine + i * spec.sticksPerInstr),
                          hex(storeBuffer), spec.sticksPerInstr);
    text += "    halt\n";
  }
  return assembleOrDie(text, "streaming.s", config);
}

isa::Program ptProgram(const hw::HwConfig &config, const PtSpec &spec) {
  SPYRE_ASSERT(spec.m > 0 && spec.instrsPerCorelet > 0, "empty PT program");
  const PtLayout l = ptLayout(spec);
  const int corelets = config.chip.coreletsPerCore;
  SPYRE_ASSERT(ptLxSticks(spec, corelets) <= config.lxSticks(),
               "PT operands do not fit in LX");

  std::string text = fmt::format(".program \"pt_{}_m{}\"\n.core 0\n",
                                 spec.int8 ? "int8" : "dl16", spec.m);
  for (int u = 0; u < corelets; ++u) {
    const int64_t c = l.a + l.b + u * l.c;
    text += fmt::format(".engine pt.{}\n", u);
    for (int i = 0; i < spec.instrsPerCorelet; ++i)
      text += fmt::format("    {} {}, 0x0, {}, m={}, k={}, n={}\n",
                          spec.int8 ? "mmi8" : "mm", hex(c), hex(l.a), spec.m,
                          spec.k, spec.n);
    text += "    halt\n";
  }
  return assembleOrDie(text, "pt.s", config);
}

isa::Program ringPairProgram(const hw::HwConfig &config, const RingSpec &spec,
                             int from, int to) {
  SPYRE_ASSERT(from != to && from >= 0 && to >= 0 && from < config.chip.cores &&
                   to < config.chip.cores,
               "a ring pair needs two distinct cores of the chip");
  SPYRE_ASSERT(spec.sticks > 0 && spec.sticks <= config.lxSticks() &&
                   spec.transfers > 0,
               "ring tile outside LX");
  std::string text = fmt::format(".program \"ring_pair\"\n.core {}\n"
                                 ".engine ring\n",
                                 from);
  for (int i = 0; i < spec.transfers; ++i)
    text += fmt::format("    send {}, 0x0, n={}\n", to, spec.sticks);
  text += fmt::format("    halt\n.core {}\n.engine ring\n", to);
  for (int i = 0; i < spec.transfers; ++i)
    text += fmt::format("    recv {}, 0x0, n={}\n", from, spec.sticks);
  text += "    halt\n";
  return assembleOrDie(text, "ring_pair.s", config);
}

isa::Program ringShiftProgram(const hw::HwConfig &config,
                              const RingSpec &spec) {
  const int cores = config.chip.cores;
  SPYRE_ASSERT(cores >= 2 && cores % 2 == 0,
               "the ring shift pairs even and odd cores");
  const int64_t recvBuffer = config.lxSticks() / 2;
  SPYRE_ASSERT(spec.sticks > 0 && spec.sticks <= recvBuffer &&
                   spec.transfers > 0,
               "ring shift tile larger than half of LX");
  std::string text = ".program \"ring_shift\"\n";
  for (int c = 0; c < cores; ++c) {
    const int next = (c + 1) % cores, prev = (c + cores - 1) % cores;
    const std::string send =
        fmt::format("    send {}, 0x0, n={}\n", next, spec.sticks);
    const std::string recv = fmt::format("    recv {}, {}, n={}\n", prev,
                                         hex(recvBuffer), spec.sticks);
    text += fmt::format(".core {}\n.engine ring\n", c);
    for (int i = 0; i < spec.transfers; ++i)
      text += c % 2 == 0 ? send + recv : recv + send;
    text += "    halt\n";
  }
  return assembleOrDie(text, "ring_shift.s", config);
}

isa::Program relayoutProgram(const hw::HwConfig &config,
                             const RingSpec &spec) {
  const int cores = config.chip.cores;
  const int corelets = config.chip.coreletsPerCore;
  SPYRE_ASSERT(cores >= 2 && cores % 2 == 0,
               "the relayout pairs even and odd cores");
  // Source slice [0, sticks), destination [dst, dst + sticks): the first
  // half of each stays on its core, the second half arrives from the
  // previous core.
  const int64_t half = spec.sticks / 2;
  const int64_t dst = config.lxSticks() / 2;
  SPYRE_ASSERT(half > 0 && half % corelets == 0 && spec.sticks <= dst &&
                   spec.transfers > 0,
               "relayout slice outside LX");
  const int64_t perCorelet = half / corelets;
  std::string text = ".program \"relayout\"\n";
  for (int c = 0; c < cores; ++c) {
    const int next = (c + 1) % cores, prev = (c + cores - 1) % cores;
    const std::string send =
        fmt::format("    send {}, {}, n={}\n", next, hex(half), half);
    const std::string recv = fmt::format("    recv {}, {}, n={}\n", prev,
                                         hex(dst + half), half);
    text += fmt::format(".core {}\n.engine ring\n", c);
    for (int i = 0; i < spec.transfers; ++i)
      text += c % 2 == 0 ? send + recv : recv + send;
    text += "    halt\n";
    for (int u = 0; u < corelets; ++u) {
      text += fmt::format(".engine sfu.{}\n", u);
      for (int i = 0; i < spec.transfers; ++i)
        text += fmt::format("    copy {}, {}, n={}\n",
                            hex(dst + u * perCorelet), hex(u * perCorelet),
                            perCorelet);
      text += "    halt\n";
    }
  }
  return assembleOrDie(text, "relayout.s", config);
}

// ---------------------------------------------------------- measurements

Measurement runTimingOnly(const hw::HwConfig &config,
                          const isa::Program &program) {
  // The programs reuse LX buffers and read LX they never wrote: they are
  // traffic patterns, not computations, so the schedule checks are off.
  SimOptions options;
  options.numerics = false;
  options.checks = false;
  Machine machine(config, program, options);
  machine.run();
  SPYRE_ASSERT(machine.findings().empty(),
               "a calibration program ended with a finding: " +
                   machine.findings().front().str());
  Measurement out;
  out.cycles = machine.totalCycles();
  return out;
}

Measurement measureStreaming(const hw::HwConfig &config,
                             const StreamingSpec &spec) {
  Measurement out = runTimingOnly(config, streamingProgram(config, spec));
  const uint64_t engines = spec.kind == StreamKind::Mixed ? 2 : 1;
  out.work = engines * static_cast<uint64_t>(spec.cores) *
             static_cast<uint64_t>(spec.instrsPerEngine) *
             static_cast<uint64_t>(spec.sticksPerInstr) *
             uint64_t{isa::kStickBytes};
  return out;
}

Measurement measurePt(const hw::HwConfig &config, const PtSpec &spec) {
  Measurement out = runTimingOnly(config, ptProgram(config, spec));
  out.work = static_cast<uint64_t>(config.chip.coreletsPerCore) *
             static_cast<uint64_t>(spec.instrsPerCorelet) * spec.m * spec.k *
             spec.n;
  return out;
}

Measurement measureRingLink(const hw::HwConfig &config, const RingSpec &spec) {
  Measurement out = runTimingOnly(config, ringPairProgram(config, spec, 0, 1));
  out.work = static_cast<uint64_t>(spec.transfers) *
             static_cast<uint64_t>(spec.sticks) * uint64_t{isa::kStickBytes};
  return out;
}

std::string_view rowKernelName(RowKernelKind kind) {
  switch (kind) {
  case RowKernelKind::Softmax:
    return "softmax";
  case RowKernelKind::LayerNorm:
    return "layer norm";
  case RowKernelKind::RmsNorm:
    return "RMS norm";
  }
  SPYRE_UNREACHABLE("unknown row kernel");
}

isa::Program rowKernelProgram(const hw::HwConfig &config,
                              const RowKernelSpec &spec) {
  SPYRE_ASSERT(spec.rows > 0 && spec.cols > 0 && spec.cores > 0 &&
                   spec.cores <= config.chip.cores,
               "row kernel outside the chip");
  using isa::DType;
  using isa::TensorKind;
  codegen::ProgramBuilder pb(config, std::string(rowKernelName(spec.kind)));
  const std::vector<int64_t> shape = {spec.rows, spec.cols};
  auto x = codegen::TensorRef::of(
      pb.addTensor("x", TensorKind::Input, DType::Dl16, shape));
  auto y = codegen::TensorRef::of(
      pb.addTensor("y", TensorKind::Output, DType::Dl16, shape));
  auto vec = [&](const char *name) {
    return codegen::TensorRef::of(
        pb.addTensor(name, TensorKind::Input, DType::Dl16, {spec.cols}));
  };
  codegen::KernelOptions opt;
  opt.cores = spec.cores;
  switch (spec.kind) {
  case RowKernelKind::Softmax:
    codegen::emitSoftmax(pb, x, y, opt);
    break;
  case RowKernelKind::LayerNorm:
    codegen::emitLayerNorm(pb, x, vec("weight"), vec("bias"), y, 1e-5f, opt);
    break;
  case RowKernelKind::RmsNorm:
    codegen::emitRmsNorm(pb, x, vec("weight"), y, 1e-6f, opt);
    break;
  }
  return pb.finish();
}

Measurement measureRowKernel(const hw::HwConfig &config,
                             const RowKernelSpec &spec) {
  Measurement out = runTimingOnly(config, rowKernelProgram(config, spec));
  const uint64_t lanes = uint64_t{isa::kStickBytes} / 2;
  const uint64_t rowSticks =
      (static_cast<uint64_t>(spec.cols) + lanes - 1) / lanes;
  const uint64_t vectors = spec.kind == RowKernelKind::LayerNorm ? 2
                           : spec.kind == RowKernelKind::RmsNorm ? 1
                                                                 : 0;
  out.work = (2 * static_cast<uint64_t>(spec.rows) +
              vectors * static_cast<uint64_t>(spec.cores)) *
             rowSticks * uint64_t{isa::kStickBytes};
  return out;
}

isa::Program restickifyProgram(const hw::HwConfig &config, int64_t n,
                               int cores) {
  SPYRE_ASSERT(n > 0 && cores > 0 && cores <= config.chip.cores,
               "restickify outside the chip");
  using isa::DType;
  using isa::TensorKind;
  codegen::ProgramBuilder pb(config, "restickify");
  auto x = codegen::TensorRef::of(
      pb.addTensor("x", TensorKind::Input, DType::Dl16, {n, n}));
  auto y = codegen::TensorRef::of(
      pb.addTensor("y", TensorKind::Output, DType::Dl16, {n, n}));
  codegen::KernelOptions opt;
  opt.cores = cores;
  codegen::emitTranspose(pb, x, y, opt);
  return pb.finish();
}

Measurement measureRestickify(const hw::HwConfig &config, int64_t n,
                              int cores) {
  Measurement out = runTimingOnly(config, restickifyProgram(config, n, cores));
  out.work = 2 * static_cast<uint64_t>(n) * static_cast<uint64_t>(n) * 2;
  return out;
}

Measurement measureRingShift(const hw::HwConfig &config, const RingSpec &spec) {
  Measurement out = runTimingOnly(config, ringShiftProgram(config, spec));
  out.work = static_cast<uint64_t>(spec.transfers) *
             static_cast<uint64_t>(spec.sticks) * uint64_t{isa::kStickBytes};
  return out;
}

Measurement measureRelayout(const hw::HwConfig &config, const RingSpec &spec) {
  Measurement out = runTimingOnly(config, relayoutProgram(config, spec));
  out.work = 2 * static_cast<uint64_t>(spec.transfers) *
             static_cast<uint64_t>(spec.sticks) * uint64_t{isa::kStickBytes};
  return out;
}

// ----------------------------------------------------------------- table

double Figure::ratio() const {
  SPYRE_ASSERT(published.has_value() && *published > 0,
               "ratio of a figure without a published value");
  return modelled / *published;
}

bool Figure::withinTenPercent() const {
  return std::fabs(ratio() - 1.0) <= 0.10;
}

std::optional<Unsupported> unsupportedReason(const hw::HwConfig &config) {
  // Streaming and the ring shift keep two buffers of 4096 sticks; the DL16
  // PT program needs 4608 sticks plus 1024 per corelet.
  const int64_t lxNeed =
      std::max(2 * StreamingSpec{}.sticksPerInstr,
               ptLxSticks(PtSpec{}, config.chip.coreletsPerCore));
  if (config.lxSticks() < lxNeed)
    return Unsupported{"lx.size_bytes",
                       fmt::format("the calibration programs need at least {} "
                                   "bytes of LX",
                                   lxNeed * isa::kStickBytes)};
  if (config.chip.cores < 2)
    return Unsupported{"chip.cores", "the ring figures need at least 2 cores"};
  const StreamingSpec s;
  const int64_t memNeed = 2 * s.sticksPerInstr * s.instrsPerEngine *
                          std::min(config.chip.cores, 32) * isa::kStickBytes;
  if (config.memory.sizeBytes < memNeed)
    return Unsupported{"memory.size_bytes",
                       fmt::format("the streaming programs need at least {} "
                                   "bytes of device memory",
                                   memNeed)};
  return std::nullopt;
}

std::vector<Figure> calibrationFigures(const hw::HwConfig &config) {
  SPYRE_ASSERT(!unsupportedReason(config).has_value(),
               "calibration of an unsupported config");
  std::vector<Figure> out;

  for (StreamKind kind : {StreamKind::OneWay, StreamKind::Mixed}) {
    const bool mixed = kind == StreamKind::Mixed;
    for (int cores : {1, 2, 8, 32}) {
      if (cores > config.chip.cores)
        continue;
      StreamingSpec spec;
      spec.cores = cores;
      spec.kind = kind;
      Figure f;
      f.name = fmt::format("Streaming {}, {} core{}",
                           mixed ? "mixed (loads = stores)" : "one-way (loads)",
                           cores, cores == 1 ? "" : "s");
      f.unit = "GB/s";
      f.modelled = measureStreaming(config, spec).perNs(config);
      if (cores == 1)
        f.comparison = Comparison::Unpublished;
      else
        f.published = mixed ? kMixedGBps : kOneWayGBps;
      out.push_back(f);
    }
  }

  PtSpec full;
  const double peak = measurePt(config, full).perNs(config);
  out.push_back({"PT DL16, m = 64 (8 passes: full rate), per core", "MAC/ns",
                 kPeakDl16MacPerNs, peak, Comparison::Checked});
  for (uint64_t m : {32, 16, 8}) {
    PtSpec spec;
    spec.m = m;
    const uint64_t passes = (m + kPublishedPassRows - 1) / kPublishedPassRows;
    const double law =
        std::min(1.0, std::sqrt(static_cast<double>(passes) /
                                static_cast<double>(kPublishedFullRatePasses)));
    out.push_back({fmt::format("PT DL16, m = {} ({} pass{}: sqrt({}/8) of "
                               "peak), per core",
                               m, passes, passes == 1 ? "" : "es", passes),
                   "MAC/ns", kPeakDl16MacPerNs * law,
                   measurePt(config, spec).perNs(config), Comparison::Checked});
  }
  PtSpec int8;
  int8.int8 = true;
  out.push_back({"PT INT8, m = 64 (twice the DL16 rate), per core", "MAC/ns",
                 2 * kPeakDl16MacPerNs, measurePt(config, int8).perNs(config),
                 Comparison::Checked});
  out.push_back({"Sustained large matmul, whole kernel (reference: PT "
                 "primitive above)",
                 "MAC/ns", kSustainedMatmulMacPerNs, peak,
                 Comparison::Reference});

  // IBM finds pointwise and softmax-like kernels memory-bound on Spyre: a
  // single-core softmax or norm moves its rows at the mixed streaming rate.
  for (RowKernelKind kind : {RowKernelKind::Softmax, RowKernelKind::LayerNorm,
                             RowKernelKind::RmsNorm})
    for (int64_t cols : {1024, 4096}) {
      RowKernelSpec spec;
      spec.kind = kind;
      spec.cols = cols;
      out.push_back(
          {fmt::format("{} DL16 [{} x {}], 1 core: bytes over time "
                       "(memory-bound: mixed rate)",
                       rowKernelName(kind), spec.rows, cols),
           "GB/s", kMixedGBps, measureRowKernel(config, spec).perNs(config),
           Comparison::Checked});
    }

  for (int cores : {8, 32}) {
    if (cores > config.chip.cores)
      continue;
    out.push_back({fmt::format("Restickify (transpose) DL16 [2048 x 2048] "
                               "through device memory, {} cores: bytes read "
                               "and written over time",
                               cores),
                   "GB/s", kRestickifyGBps,
                   measureRestickify(config, 2048, cores).perNs(config),
                   Comparison::Checked});
  }

  const RingSpec ring;
  out.push_back({"Ring link, one direction, core 0 to core 1", "GB/s",
                 kRingLinkGBps, measureRingLink(config, ring).perNs(config),
                 Comparison::Checked});
  if (config.chip.cores % 2 == 0) {
    out.push_back({"Ring shift, every core to the next: bytes received per "
                   "core",
                   "GB/s", std::nullopt,
                   measureRingShift(config, ring).perNs(config),
                   Comparison::Unpublished});
    out.push_back({"LX-to-LX relayout, split 2, every core: span walked per "
                   "core (reference: one ring transfer in flight per core)",
                   "GB/s", kRelayoutGBps,
                   measureRelayout(config, ring).perNs(config),
                   Comparison::Reference});
  }
  return out;
}

std::string calibrationTable(const std::vector<Figure> &figures) {
  std::string out = "| Figure | Published | Modelled | Ratio | Within 10% |\n"
                    "|---|---:|---:|---:|---|\n";
  for (const Figure &f : figures) {
    std::string published = "none", ratio = "-", verdict;
    if (f.published) {
      published = fmt::format("{:.1f} {}", *f.published, f.unit);
      ratio = fmt::format("{:.3f}", f.ratio());
    }
    switch (f.comparison) {
    case Comparison::Checked:
      verdict = f.withinTenPercent() ? "yes" : "no";
      break;
    case Comparison::Unpublished:
      verdict = "n/a (no published figure)";
      break;
    case Comparison::Reference:
      verdict = "n/a (reference, not a primitive)";
      break;
    }
    out += fmt::format("| {} | {} | {:.1f} {} | {} | {} |\n", f.name, published,
                       f.modelled, f.unit, ratio, verdict);
  }
  return out;
}

} // namespace spyre::sim::calibration
