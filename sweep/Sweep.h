// Design-space sweeps (docs/sweep.md): a sweep spec names models, a base
// config and a grid or list of points over config keys and compiler options;
// it expands, deterministically, into numbered points, each one compile +
// simulate run in its own process (the SystemC kernel is one per process),
// each writing one JSON result, aggregated into results.csv.
//
// This header is what every backend needs: the expanded plan, the run
// options, the command line that runs one point, and the entry points of
// the local backend. The spec format lives in sweep/Spec.h, a point's run
// in sweep/PointRun.h, results and results.csv in sweep/Results.h.
#pragma once

#include "hw/ConfigSchema.h"
#include "hw/HwConfig.h"
#include "sweep/ServeSettings.h"

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace spyre::sweep {

/// How many points (models times grid combinations or listed points, before
/// the constraints) a spec may expand to unless `--max-points` raises it:
/// each point holds its effective config, so the expansion takes memory in
/// proportion (docs/sweep.md, "Expansion").
inline constexpr uint64_t kDefaultMaxPoints = 100000;

/// The compiler options a sweep can set; any other setting is a config key.
inline constexpr const char *kOptLevelKey = "opt_level";
inline constexpr const char *kMappingKey = "mapping";

/// One parameter value of a point: a config key path as `spyre config show`
/// prints it (`lx.size_bytes`) or a compiler option (`opt_level`, `mapping`).
struct Setting {
  std::string key;
  hw::ParamValue value;
};

/// One swept parameter: a grid entry, or a key of a points list. A linked
/// entry sets several keys together (`memory: [{peak_gb_per_s: ..., ...}]`).
struct Axis {
  std::string name;              ///< as the spec writes it
  std::vector<std::string> keys; ///< the full keys it sets, in written order
  size_t values = 0;             ///< how many values it takes
};

struct SweepPoint {
  size_t index = 0; ///< position in the expansion, from 0
  /// 12 hex digits: a hash of the model as written, the settings (in key
  /// order), the -O level, the mapping and the numerics options. Reordering
  /// the spec keeps every id, so a resumed sweep finds its results.
  std::string id;
  std::string model;     ///< as the spec writes it (relative to the spec)
  std::string modelPath; ///< absolute
  std::string modelHash; ///< `0x` + FNV-1a 64 of the model file's bytes
  std::vector<Setting> settings; ///< in axis order, linked keys as written
  int optLevel = 2;
  std::string mapping;     ///< a mapping file to replay, as written; or empty
  std::string mappingPath; ///< absolute, or empty
  /// The base config with the settings applied. It may fail validation
  /// (e.g. an LX size that is not whole sticks): the point then fails with
  /// that message when it runs, without stopping the others.
  hw::HwConfig config;
  std::string configFingerprint; ///< of `config`, as fingerprintString
  /// A serve sweep's point: its serving knobs (the `serve:` section with the
  /// point's `serve.*` settings applied), and the fingerprint of them and of
  /// the trace, which a result must carry to count.
  ServeSettings serve;
  std::string serveFingerprint; ///< empty for a compile point
  /// The exact argv that runs this point: pointArgv(plan, index, exe).
  std::vector<std::string> command;
};

/// A point of the grid that a constraint removed; it has no index.
struct DroppedPoint {
  SweepPoint point;
  std::string constraint; ///< the first constraint it fails, as written
};

struct SweepPlan {
  std::string specPath; ///< as given on the command line
  std::string outDir;   ///< as given (empty for a dry run)
  std::string baseConfig; ///< absolute path, or empty for the built-in one
  /// `KEY=VALUE` settings over the base config (`--set`), in order.
  std::vector<std::string> baseSettings;
  bool numerics = false;  ///< simulate with numbers and check the outputs
  uint64_t seed = 0;      ///< random inputs for numerics
  bool keepStats = false; ///< keep each point's statistics JSON
  /// A serve sweep (the spec has a `serve:` section): its models are LLM
  /// configs and each point runs `spyre serve` over the trace.
  bool serve = false;
  std::string requests;     ///< the trace file as written, or empty
  std::string requestsPath; ///< absolute, or empty: generated per point
  std::string requestsHash; ///< `0x` + FNV-1a 64 of the trace's bytes
  std::vector<Axis> axes;
  std::vector<SweepPoint> points;
  std::vector<DroppedPoint> dropped;
  size_t gridSize = 0; ///< points before the constraints (models included)
  /// The limit the plan was expanded under; pointArgv passes it on when it
  /// is not the default, so a point's process expands the same spec too.
  uint64_t maxPoints = kDefaultMaxPoints;

  /// The result columns of the swept keys: every axis key in axis order,
  /// then opt_level when no axis sets it.
  std::vector<std::string> columns() const;
};

struct SweepRunOptions {
  int jobs = 1;        ///< points run at once
  bool submit = false; ///< slurm: submit the job array (else only write it)
  /// Run again the points whose result is a failure.
  bool retryFailed = false;
  /// The spyre executable the points run; currentExecutable() by default.
  std::string spyreExe;
};

/// The running executable (/proc/self/exe resolved).
std::string currentExecutable();

/// Reads, validates and expands the spec. A bad spec is a UserError located
/// in it (exit 1), and so is one that expands to more than `maxPoints`
/// points before the constraints: they are counted (without overflow)
/// before any is made. `outDir` is only recorded (may be empty).
/// `baseSettings` are applied over the spec's base config (hw::loadConfig);
/// a bad one is a usage error naming it.
SweepPlan planSweep(const std::string &specPath, const std::string &outDir,
                    uint64_t maxPoints = kDefaultMaxPoints,
                    const std::vector<std::string> &baseSettings = {});

/// argv of `spyre sweep SPEC -o DIR --point I`, with SPEC and DIR absolute,
/// for `spyreExe`; with `--max-points N` before `--point` when the plan's
/// limit is not the default, and the plan's `--set` settings.
std::vector<std::string> pointArgv(const SweepPlan &plan, size_t index,
                                   const std::string &spyreExe);

/// DIR/points/<id>.json: the result file; the point is finished when it
/// exists, parses and belongs to the point (resultState).
std::string resultPath(const SweepPlan &plan, const SweepPoint &point);
/// DIR/points/<id>/: the point's config.yaml, stdout.txt, stderr.txt and,
/// with keep_stats, stats.json.
std::string pointDir(const SweepPlan &plan, const SweepPoint &point);

enum class ResultState {
  Missing, ///< no file, an unreadable one, or one of other settings
  Ok,
  Failed,
};

/// What the result file of `point` says. A file left from another base
/// config or another model file (its fingerprint or model hash differ) is
/// Missing: it is run again.
ResultState resultState(const SweepPlan &plan, const SweepPoint &point);

/// Creates DIR and DIR/points (a UserError naming DIR when it cannot) and
/// writes DIR/plan.json, which `spyre sweep report` reads.
void prepareOutDir(const SweepPlan &plan);

/// `--point I`: runs point `index` in this process, writes its result (a
/// failed point writes its error) and says how it ended on `out`. Returns
/// 0; a UserError only for a bad DIR. Without `useSystemC` the point runs
/// on the plain-C++ event loop (the same results), so that one process can
/// run several points.
int runPoint(const SweepPlan &plan, size_t index, std::ostream &out,
             bool useSystemC = true);

/// `--aggregate`: (re)writes DIR/plan.json and DIR/results.csv from the
/// results present and prints the summary to `out`. Returns 0 when every
/// point has a result and none failed, 3 otherwise (the summary says which).
int aggregate(const SweepPlan &plan, std::ostream &out);

/// The local backend: runs the unfinished points `options.jobs` at a time,
/// each as a child process running `command`, with a progress line on
/// `progress`; then aggregates into `out`. SIGINT or SIGTERM stops the
/// children and returns 130, keeping the finished results. Otherwise
/// returns what aggregate returns.
int runLocal(const SweepPlan &plan, const SweepRunOptions &options,
             std::ostream &out, std::ostream &progress);

/// `--dry-run`: the expanded points and the ones the constraints dropped.
std::string dryRunText(const SweepPlan &plan);

} // namespace spyre::sweep
