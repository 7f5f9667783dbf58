"""spyre: the compiler and cycle-approximate simulator of the IBM Spyre
accelerator, from Python (docs/python.md).

    import numpy as np, spyre
    program = spyre.compile("examples/models/torch_mlp/model.onnx", level=2)
    result = program.run({"x": np.load("examples/models/torch_mlp/x.npy")})
    result.outputs["y"], result.cycles, result.stats["total_cycles"]

The work is done by the project's libraries through the extension module
`spyre._spyre`; this file adds the keyword checks and the conversions that
are plain Python (JSON, pandas). Errors are `spyre.Error` subclasses with the
message and exit code of the `spyre` command: InputError (1, bad input),
UsageError (2, a bad argument), CheckError (3, wrong numbers or a schedule
finding), InternalError (70, a bug in spyre).
"""

import json as _json
import os as _os
import tempfile as _tempfile

from ._spyre import (  # noqa: F401  (the package's API)
    CheckError,
    Config,
    Error,
    InputError,
    InternalError,
    Program,
    Result,
    UsageError,
)
from . import _spyre

__all__ = [
    "CheckError", "Config", "Error", "InputError", "InternalError", "Program",
    "Result", "UsageError", "compile", "generate", "llm", "sweep",
]


def _usage(where, message):
    error = UsageError("%s: error: %s" % (where, message))
    error.exit_code = 2
    return error


def _check_options(where, options, known):
    """A keyword the function does not take is a UsageError naming it, as
    the command line names an unknown option."""
    for name in options:
        raise _usage(where, "unknown option '%s' (options: %s)"
                     % (name, ", ".join(known)))


def compile(model, level=2, config=None, shapes=None, *, host_fallback=True,
            **options):
    """Compiles a model (a path to an ONNX model or a graph JSON) for a
    config (a spyre.Config; the built-in one by default) at optimisation
    level 0, 1 or 2, as `spyre compile` does. `shapes` gives static shapes
    to ONNX inputs whose dimensions are dynamic: {name: (d0, d1, ...)}.
    With host_fallback=False a node the device cannot run is an error
    instead of running on the host. Returns a spyre.Program."""
    _check_options("spyre.compile", options,
                   ["level", "config", "shapes", "host_fallback"])
    if isinstance(level, bool) or not isinstance(level, int):
        raise _usage("spyre.compile", "level is 0, 1 or 2, got %r" % (level,))
    if config is not None and not isinstance(config, Config):
        raise _usage("spyre.compile", "config is a spyre.Config (load a file "
                     "with spyre.Config.load(path))")
    if shapes is None:
        shapes = {}
    if not isinstance(shapes, dict):
        raise _usage("spyre.compile", "shapes is a dict {input name: shape}")
    # The text of --shape, so the command line's checks apply.
    shape_args = []
    for name, dims in shapes.items():
        if isinstance(dims, int):
            dims = (dims,)
        shape_args.append("%s=%s" % (name, ",".join(str(d) for d in dims)))
    return _spyre._compile(_os.fspath(model), level, config, shape_args,
                           host_fallback)


def _stats(result):
    """The statistics as a dict (`spyre run --stats`; docs/sim-output.md)."""
    return _json.loads(result.stats_json)


Result.stats = property(_stats, doc=_stats.__doc__)


def _count(where, name, value, lowest):
    """An int of at least `lowest` (None stays None), else a UsageError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise _usage(where, "%s is an int of at least %d, got %r"
                     % (name, lowest, value))
    return value


def _check_level_and_config(where, level, config):
    """An optimisation level that is an int (the library checks its range)
    and a spyre.Config or None, else a UsageError."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise _usage(where, "level is 0, 1 or 2, got %r" % (level,))
    if config is not None and not isinstance(config, Config):
        raise _usage(where, "config is a spyre.Config (load a file with "
                     "spyre.Config.load(path))")


def llm(model, mode="decode", *, batch=None, tokens=None, context=None,
        layers=None, level=2, config=None, unrolled=False, **options):
    """Times one step of a decoder language model given by its Hugging Face
    config.json, as `spyre llm MODEL --mode MODE --embedding --lm-head
    --timing-only` does (docs/llm.md): from the step's token ids (the
    embedding lookup on the device) through its layers, in a loop, to the
    LM head and the greedy next token. mode is "prefill" (`tokens` new
    tokens, default 512, batch 1) or "decode" (one new token per sequence
    against `context` cached ones, default 4096, `batch` default 4).
    `layers` simulates fewer layers and extrapolates to the model's.
    Returns a dict: the step's simulated time (`step_us`, `cycles`), the
    model's (`model_us`: the time to first token of a prefill, the
    per-token latency of a decode step; `extrapolated`), its bound and how
    much of it the step reaches, the bytes, MACs, program size, findings,
    and `summary`, the command's text."""
    _check_options("spyre.llm", options,
                   ["mode", "batch", "tokens", "context", "layers", "level",
                    "config", "unrolled"])
    where = "spyre.llm"
    if mode not in ("prefill", "decode"):
        raise _usage(where, "mode is 'prefill' or 'decode', got %r" % (mode,))
    _check_level_and_config(where, level, config)
    batch = _count(where, "batch", batch, 1)
    if batch is None:
        batch = 1 if mode == "prefill" else 4
    tokens = _count(where, "tokens", tokens, 1)
    context = _count(where, "context", context, 0)
    layers = _count(where, "layers", layers, 1)
    return _spyre._llm(_os.fspath(model), config, mode, batch,
                       -1 if tokens is None else tokens,
                       -1 if context is None else context,
                       -1 if layers is None else layers, level,
                       bool(unrolled))


def generate(model, steps=8, *, prompt=None, batch=1, chunk=None,
             context=None, paged=False, layers=None, level=2, config=None,
             host_sampling=False, timing_only=False, check=False, seed=1,
             unrolled=False, **options):
    """Greedy generation on the persistent device, as `spyre llm MODEL
    --generate STEPS` runs it (docs/llm.md): the weights written once,
    `batch` seeded prompts of `prompt` tokens (default 60) prefilled (in
    chunks of at most `chunk` tokens, each after the ones before it, when
    given), then `steps` decode steps, each sequence's key/value cache
    written in place, in 64-token pages (`paged`: from a pool, through a
    block table per sequence). With `check`, every sequence is generated
    again by the double-precision reference. With `timing_only` no numbers
    are computed; `context` then starts the sequences with that many cached
    tokens instead of a prompt. Returns a dict: `tokens` (per sequence),
    `prompts`, `steps` (each step's kind, positions, program and total
    time, bytes each way), `ttft_us`, `per_token_us`, `check` (per
    sequence, with `check`), `ok`, `findings` and `summary`, the command's
    text."""
    _check_options("spyre.generate", options,
                   ["steps", "prompt", "batch", "chunk", "context", "paged",
                    "layers", "level", "config", "host_sampling",
                    "timing_only", "check", "seed", "unrolled"])
    where = "spyre.generate"
    _check_level_and_config(where, level, config)
    steps = _count(where, "steps", steps, 1)
    if steps is None:
        raise _usage(where, "steps is an int of at least 1, got None")
    prompt = _count(where, "prompt", prompt, 1)
    batch = _count(where, "batch", batch, 1)
    if batch is None:
        batch = 1
    chunk = _count(where, "chunk", chunk, 1)
    context = _count(where, "context", context, 1)
    layers = _count(where, "layers", layers, 1)
    seed = _count(where, "seed", seed, 0)
    if seed is None:
        seed = 1
    if context is not None and prompt is not None:
        raise _usage(where, "context starts the sequences with cached tokens "
                     "instead of a prompt; give one of them")
    return _spyre._generate(_os.fspath(model), config, steps,
                            60 if prompt is None else prompt, batch,
                            -1 if chunk is None else chunk,
                            -1 if context is None else context,
                            -1 if layers is None else layers, level,
                            bool(paged), bool(host_sampling),
                            bool(timing_only), bool(check), seed,
                            bool(unrolled))


def sweep(spec, out_dir=None, *, retry_failed=False, **options):
    """Runs a design-space sweep spec (docs/sweep.md) in this process: every
    point compiled and simulated, one after another, resumable when out_dir
    is given (a second call runs only the points without a result), with
    out_dir/results.csv written as `spyre sweep` writes it. Returns one dict
    per point (the columns of results.csv, None for an empty field), or a
    pandas.DataFrame of them when pandas is installed."""
    _check_options("spyre.sweep", options, ["out_dir", "retry_failed"])
    spec = _os.fspath(spec)
    if out_dir is None:
        with _tempfile.TemporaryDirectory(prefix="spyre-sweep-") as tmp:
            header, rows, _ = _spyre._sweep(spec, tmp, retry_failed)
    else:
        header, rows, _ = _spyre._sweep(spec, _os.fspath(out_dir), retry_failed)
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows, columns=header)
