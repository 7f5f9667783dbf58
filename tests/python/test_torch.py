"""The PyTorch bridge: the example modules of scripts/export_torch.py
exported, compiled and simulated by spyre.torch.run, their outputs against
the modules' own within the tolerance of `spyre run --check`."""

import importlib.util
import os

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (Debian's python3-torch; "
    "scripts/install-deps.sh --with-torch)")

import spyre  # noqa: E402
import spyre.torch  # noqa: E402
from conftest import ROOT  # noqa: E402


def export_script():
    spec = importlib.util.spec_from_file_location(
        "export_torch", os.path.join(ROOT, "scripts", "export_torch.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_module(name):
    """The module and input scripts/export_torch.py makes for `name`."""
    script = export_script()
    seed, make, shape, _ = script.MODELS[name]
    torch.manual_seed(seed)
    module = make()
    generator = torch.Generator().manual_seed(seed + 100)
    script.perturb_norms(module, generator)
    return module.eval(), torch.randn(shape, generator=generator)


def within_run_tolerance(got, expected):
    scale = 8 * 2.0 ** -8
    allowed = scale * (np.abs(expected) + np.abs(expected).mean())
    return np.all(np.abs(got - expected) <= allowed)


@pytest.mark.parametrize("name", ["torch_mlp", "gpt_decoder", "llama_block"])
def test_example_module_matches_its_own_output(name):
    module, x = example_module(name)
    with torch.no_grad():
        expected = module(x)
    run = spyre.torch.run(module, (x,), level=2)
    assert isinstance(run.outputs, torch.Tensor)
    assert run.outputs.shape == expected.shape
    assert run.outputs.dtype == torch.float32
    assert within_run_tolerance(run.outputs.numpy(), expected.numpy())
    assert run.result.check({"output_0": expected.numpy()})
    assert run.stats["total_cycles"] == run.cycles > 0
    assert run.result.findings == []
    assert run.program.name == type(module).__name__


def test_same_numbers_as_the_committed_export():
    # examples/models/torch_mlp was exported from the same module and input:
    # the bridge's export must run to the same device numbers.
    module, x = example_module("torch_mlp")
    run = spyre.torch.run(module, x)
    committed = spyre.compile(os.path.join(ROOT, "examples", "models", "torch_mlp",
                                           "model.onnx"))
    result = committed.run({"x": x.numpy()})
    assert np.array_equal(run.outputs.numpy(), result.outputs["y"])
    assert run.cycles == result.cycles


def test_several_inputs_and_outputs():
    class TwoWay(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(64, 64)

        def forward(self, a, b):
            h = self.fc(a) + b
            return h, torch.relu(h)

    torch.manual_seed(0)
    module = TwoWay().eval()
    a, b = torch.randn(16, 64), torch.randn(16, 64)
    run = spyre.torch.run(module, (a, b), input_names=["a", "b"])
    assert run.program.inputs == {"a": (16, 64), "b": (16, 64)}
    with torch.no_grad():
        expected = module(a, b)
    assert isinstance(run.outputs, tuple) and len(run.outputs) == 2
    for got, want in zip(run.outputs, expected):
        assert within_run_tolerance(got.numpy(), want.numpy())


def test_bad_arguments_are_usage_errors():
    module = torch.nn.Linear(64, 64)
    with pytest.raises(spyre.UsageError):
        spyre.torch.run(module, np.zeros((16, 64), np.float32))
    with pytest.raises(spyre.UsageError):
        spyre.torch.run(module, torch.zeros(16, 64), levle=1)
