// The Slurm backend of design-space sweeps (docs/sweep.md, "Slurm"): a job
// array with one task per point still without a result, throttled to
// `-j` tasks at once, and an aggregation job that runs after the array.
// `spyre sweep --backend slurm` writes both batch scripts into DIR/slurm/;
// with `--submit` it also submits them with sbatch and follows them with
// squeue until they have left the queue.
#pragma once

#include "sweep/Sweep.h"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sweep {

/// The two batch scripts of a Slurm sweep, as deterministic text.
struct SlurmScripts {
  std::string sweep;     ///< DIR/slurm/sweep.sbatch: the job array
  std::string aggregate; ///< DIR/slurm/aggregate.sbatch: `--aggregate`
};

/// The points a Slurm run puts in its array, ascending: those without a
/// result, and the failed ones too with `options.retryFailed`.
std::vector<size_t> slurmPendingPoints(const SweepPlan &plan,
                                       const SweepRunOptions &options);

/// Slurm's `--array` value for `indices` (ascending, not empty): runs of
/// consecutive indices as ranges, the rest listed, then the throttle:
/// `0-3%2`, `3,5,7%2`, `0-2,5%4`.
std::string slurmArraySpec(const std::vector<size_t> &indices, int throttle);

/// `word` as one word of a POSIX shell command: as it is when it holds only
/// letters, digits and `@%+=:,./_-`, else single-quoted with each `'`
/// written as `'\''`. The shell expands nothing in either form.
std::string shellQuote(std::string_view word);

/// The scripts that run `indices` of `plan` (`spyre sweep SPEC -o DIR
/// --point $SLURM_ARRAY_TASK_ID`, with `options.spyreExe` or the running
/// executable) and then aggregate. Every path in them is absolute, so they
/// run from any folder; every value in them is quoted, the spec's name in
/// the opening comment too. A DIR that Slurm cannot name (a backslash in its
/// path), or a control character such as a line break in the path of DIR,
/// the spec or the executable, is a UserError (exit 1).
SlurmScripts slurmScripts(const SweepPlan &plan,
                          const std::vector<size_t> &indices,
                          const SweepRunOptions &options);

/// `--backend slurm`: writes DIR/slurm/sweep.sbatch and aggregate.sbatch for
/// the unfinished points. Without `options.submit` it prints the sbatch
/// commands that submit them and returns 0. With it, it submits both (the
/// aggregation job depends on the array), prints the progress line on
/// `progress` while squeue still lists them, and returns what aggregate
/// returns (0, or 3 when points failed or are missing); 130 when SIGINT or
/// SIGTERM stop the following (the jobs keep running). When every point
/// already has a result it only aggregates. Missing sbatch or squeue, or a
/// submission Slurm refuses, is a UserError.
int runSlurm(const SweepPlan &plan, const SweepRunOptions &options,
             std::ostream &out, std::ostream &progress);

/// runSlurm printing to std::cout, its progress to std::cerr.
int runSlurm(const SweepPlan &plan, const SweepRunOptions &options);

} // namespace spyre::sweep
