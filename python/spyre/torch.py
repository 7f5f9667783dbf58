"""PyTorch in (docs/python.md): a torch.nn.Module exported through
torch.onnx as scripts/export_torch.py exports the example models (opset 17,
static shapes, constants folded), compiled, simulated, and its outputs
handed back as torch tensors.

    import spyre.torch
    run = spyre.torch.run(module, (x,), level=2)
    run.outputs, run.stats["total_cycles"]

Needs PyTorch (Debian's python3-torch); importing this module without it
is an ImportError that says so.
"""

import os as _os
import tempfile as _tempfile

try:
    import torch as _torch
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "spyre.torch needs PyTorch, which this Python cannot import (%s); "
        "install Debian's python3-torch (scripts/install-deps.sh --with-torch) "
        "and use /usr/bin/python3" % e) from e

import spyre as _spyre

OPSET = 17


class TorchRun:
    """A module's run on the simulated card: `outputs` as the module returns
    them (a tensor, or a tuple of tensors), `stats` (the statistics dict),
    `program` and `result` (the spyre.Program and spyre.Result)."""

    def __init__(self, outputs, program, result):
        self.outputs = outputs
        self.program = program
        self.result = result

    @property
    def stats(self):
        return self.result.stats

    @property
    def cycles(self):
        return self.result.cycles

    def __repr__(self):
        return "<spyre.torch.TorchRun %s: %d cycles>" % (self.program.name,
                                                          self.result.cycles)


def export(module, example_inputs, path, input_names=None):
    """Exports `module` on `example_inputs` (a tensor or a tuple of them) to
    the ONNX file `path`, in eval mode, every dimension static. Returns the
    input names, the output names and whether the module returns a single
    tensor."""
    args = _as_tuple(example_inputs)
    names = list(input_names or ["input_%d" % i for i in range(len(args))])
    if len(names) != len(args):
        raise _spyre_usage("%d input names for %d inputs" % (len(names), len(args)))
    with _torch.no_grad():
        outputs = module(*args)
    output_names = ["output_%d" % i for i in range(len(_as_tuple(outputs)))]
    # No dynamic_axes: every dimension stays static, as the importer needs.
    _torch.onnx.export(
        module, args, path,
        opset_version=OPSET, do_constant_folding=True,
        input_names=names, output_names=output_names,
        export_params=True, keep_initializers_as_inputs=False,
        training=_torch.onnx.TrainingMode.EVAL)
    # The exporter names every graph "torch_jit"; the graph's name is the
    # model's name in summaries and reports: the module's class.
    try:
        import onnx
    except ImportError:  # pragma: no cover - python3-onnx is a dependency
        onnx = None
    if onnx is not None:
        model = onnx.load(path)
        model.graph.name = type(module).__name__
        onnx.save(model, path)
    return names, output_names, isinstance(outputs, _torch.Tensor)


def run(module, example_inputs, level=2, config=None, *, input_names=None,
        **options):
    """Exports `module` through torch.onnx on `example_inputs` (a tensor or a
    tuple of tensors, the arguments of forward), compiles it at `level` for
    `config` (a spyre.Config; the built-in one by default) and simulates it
    with those inputs. Returns a TorchRun whose outputs are torch tensors
    (float32) shaped as the module's."""
    if options:
        raise _spyre_usage("unknown option '%s' (options: level, config, "
                           "input_names)" % next(iter(options)))
    args = _as_tuple(example_inputs)
    for i, a in enumerate(args):
        if not isinstance(a, _torch.Tensor):
            raise _spyre_usage("example input %d is a %s, not a torch.Tensor"
                               % (i, type(a).__name__))
    with _tempfile.TemporaryDirectory(prefix="spyre-torch-") as tmp:
        path = _os.path.join(tmp, "model.onnx")
        names, output_names, single = export(module, args, path, input_names)
        program = _spyre.compile(path, level=level, config=config)
    inputs = {n: a.detach().cpu().numpy() for n, a in zip(names, args)}
    result = program.run(inputs)
    outs = tuple(_torch.from_numpy(result.outputs[n]) for n in output_names)
    return TorchRun(outs[0] if single else outs, program, result)


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _spyre_usage(message):
    return _spyre._usage("spyre.torch.run", message)
