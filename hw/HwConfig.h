// The hardware description shared by the compiler and the simulator.
//
// One YAML file (configs/spyre.yaml, also compiled into the binary as the
// default) is parsed once into this tree of plain structs, validated once,
// and then passed around as `const HwConfig &`. The YAML tree has the shape of
// this struct tree; every key carries its unit in its name. Figures and their
// sources are in docs and in the comments of configs/spyre.yaml.
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::hw {

struct ChipConfig {
  int cores = 0;            ///< cores on the ring, in core-id order
  double clockGhz = 0;      ///< core clock
  int coreletsPerCore = 0;  ///< corelets sharing one LX
  int stickBytes = 0;       ///< data unit of LX, DMA and layouts
};

/// The in-order sequencer in front of every engine stream: what control,
/// scalar and synchronisation instructions cost.
struct SequencerConfig {
  int ctrlCycles = 0;   ///< nop, loop
  int scalarCycles = 0; ///< li, addi
  int syncCycles = 0;   ///< signal, wait (once satisfied), barrier release
};

struct PtConfig {
  int peRows = 0;            ///< PE array rows
  int peCols = 0;            ///< PE array columns
  int simdWidth = 0;         ///< SIMD lanes per PE; MAC/cycle = rows*cols*simd
  int passRows = 0;          ///< rows of M streamed per pass
  int fullRatePasses = 0;    ///< passes needed to reach full rate
  int int8Speedup = 0;       ///< INT8/FP8 rate relative to DL16
  int int4Speedup = 0;       ///< INT4 rate relative to DL16
  int setupCycles = 0;       ///< fixed cost per PT instruction (weight load)
};

struct SfuConfig {
  int arraysPerCorelet = 0;             ///< 1-D vector arrays of one corelet
  int dl16Lanes = 0;                    ///< DL16 elements per array and pass
  int fp32Lanes = 0;                    ///< FP32 elements per array and pass
  int simpleCyclesPerStick = 0;         ///< add, mul, max, copy, convert, ...
  int transcendentalCyclesPerStick = 0; ///< exp, rsqrt, recip, tanh, gelu, ...
  int reduceCyclesPerStick = 0;         ///< reductions within a stick
  int pipelineLatencyCycles = 0;        ///< issue to first result
  int transcendentalLatencyCycles = 0;  ///< issue to first transcendental result
};

struct LxConfig {
  int64_t sizeBytes = 0;          ///< per core
  int readSticksPerCycle = 0;     ///< per corelet port
  int writeSticksPerCycle = 0;    ///< per corelet port
};

struct DmaConfig {
  int maxOutstanding = 0;        ///< in-flight stick runs per engine
  int issueLatencyCycles = 0;    ///< request issue to memory
  int runSetupCycles = 0;        ///< extra cost of starting a new contiguous run
  int maxDims = 0;               ///< dimensions of a DMA descriptor
  int burstBytes = 0;            ///< longest piece of a run sent to memory at once
};

struct MemoryConfig {
  int64_t sizeBytes = 0;           ///< device address space (sparse)
  double peakGBps = 0;             ///< interface peak, all cores together
  double sustainedReadGBps = 0;    ///< one-way streaming, measured
  double sustainedMixedGBps = 0;   ///< mixed read/write streaming, measured
  int turnaroundCycles = 0;        ///< read/write bus turnaround penalty
  int latencyCycles = 0;           ///< request to first data
};

struct RingConfig {
  int bytesPerCycle = 0;        ///< per direction per link
  int hopLatencyCycles = 0;     ///< per hop
  int memoryNodePosition = 0;   ///< ring position of the memory interface
};

struct ReduceRingConfig {
  int bytesPerCycle = 0;
  int hopLatencyCycles = 0;
};

struct LimitsConfig {
  int64_t tensorSpanBytesPerCore = 0; ///< one tensor's span seen by a core
  int maxLoopCount = 0;               ///< hardware loop trip count
  int maxLoopDepth = 0;               ///< nested hardware loops per stream
  int syncCountersPerCore = 0;        ///< signal/wait counters per core
  int barriers = 0;                   ///< barrier ids on the chip
};

struct HostConfig {
  double pcieGBps = 0;       ///< host link, each direction
  int pcieLatencyCycles = 0; ///< per transfer
  double hostGflops = 0;     ///< host fallback compute rate
  // A server's host side per step (docs/serve.md).
  double stepOverheadUs = 0;        ///< scheduling and input preparation
  double sampleUsPerSequence = 0;   ///< sampling one sequence's next token
  double launchUs = 0;              ///< starting one program on the card
};

struct HwConfig {
  std::string name;
  ChipConfig chip;
  SequencerConfig sequencer;
  PtConfig pt;
  SfuConfig sfu;
  LxConfig lx;
  DmaConfig dma;
  MemoryConfig memory;
  RingConfig ring;
  ReduceRingConfig reduceRing;
  LimitsConfig limits;
  HostConfig host;

  /// DL16 MACs per cycle of one corelet's PT (rows * cols * simd).
  int ptMacsPerCycle() const { return pt.peRows * pt.peCols * pt.simdWidth; }
  /// LX size in sticks.
  int64_t lxSticks() const { return lx.sizeBytes / chip.stickBytes; }
  /// Stable 64-bit fingerprint: FNV-1a of the canonical YAML (toYaml without
  /// comments). Equal configs have equal fingerprints on every machine.
  uint64_t fingerprint() const;
};

/// Parses and validates YAML text. A text that names a `base:` (a config
/// file relative to `fileName`'s folder, or `default`) gives only what
/// differs from it; without one every required key must be written. Bases
/// must lie in `baseRoot` or below it (empty: `fileName`'s folder). Every
/// problem is reported to `diags` with the file name, YAML line and column
/// and the key path; returns a config only when there were no errors.
bool parseConfig(std::string_view yamlText, const std::string &fileName,
                 HwConfig &out, DiagnosticEngine &diags,
                 const std::string &baseRoot = {});

/// Checks the values of a config built or changed in code (the same checks
/// parseConfig runs after reading). Diagnostics carry `fileName` and the key
/// path but no line. Returns true when there were no errors.
bool validateConfig(const HwConfig &config, const std::string &fileName,
                    DiagnosticEngine &diags);

/// Reads, parses and validates a config file; throws UserError on the first
/// problem (after all were collected, the first is thrown).
HwConfig loadConfigFile(const std::string &path);

/// The built-in default (configs/spyre.yaml compiled into the binary).
const HwConfig &builtinConfig();
/// The built-in default's YAML text, exactly as in configs/spyre.yaml.
std::string_view builtinConfigText();

/// `path` when non-empty, else the built-in default.
HwConfig loadConfigOrDefault(const std::string &path);

/// Where the effective config of a command comes from: a config file (empty:
/// the built-in config) and `KEY=VALUE` settings over it, applied in order
/// (`--set memory.sustained_read_gb_per_s=300`).
struct ConfigSource {
  std::string path;
  std::vector<std::string> settings;
  /// The folder the file's bases must lie in (`--config-root`); empty: the
  /// folder of `path`.
  std::string baseRoot;
};

/// Loads the file of `source` with its chain of bases, then applies the
/// settings with the same reader and checks the result. A problem in a file
/// is a UserError (bad input) at its line; one made by a setting is a usage
/// error naming the setting (`--set KEY=VALUE: error: at 'key': ...`).
HwConfig loadConfig(const ConfigSource &source);

/// Canonical YAML: every key in schema order, one value each. With
/// `withComments` each key carries its unit and description as a comment and
/// the header names the fingerprint.
std::string toYaml(const HwConfig &config, bool withComments);

/// Fingerprint as it is printed everywhere: `0x` + 16 hex digits.
std::string fingerprintString(uint64_t fingerprint);

} // namespace spyre::hw
