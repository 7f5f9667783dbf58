"""Errors: each a spyre.Error subclass carrying the message and exit code the
`spyre` command gives for the same mistake."""

import os

import numpy as np
import pytest

import spyre
from conftest import ROOT, example

MLP = example("torch_mlp", "model.onnx")


def first_error_line(stderr):
    return stderr.splitlines()[0]


@pytest.fixture(scope="module")
def mlp():
    return spyre.compile(MLP)


def test_classes_and_codes():
    for cls in (spyre.InputError, spyre.UsageError, spyre.CheckError,
                spyre.InternalError):
        assert issubclass(cls, spyre.Error)
    assert issubclass(spyre.Error, Exception)


def test_bad_onnx_file_is_the_commands_input_error(tmp_path, run_cli):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is not a protobuf model")
    with pytest.raises(spyre.InputError) as e:
        spyre.compile(str(bad))
    assert e.value.exit_code == 1
    assert str(e.value).startswith(str(bad) + ": error: ")
    code, _, err = run_cli("compile", str(bad), "-o", str(tmp_path / "p.spyre"))
    assert code == 1
    assert str(e.value).splitlines()[0] == first_error_line(err)


def test_bad_graph_json_is_located_at_its_line(tmp_path, run_cli):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "m",\n  "inputs": [}\n')
    with pytest.raises(spyre.InputError) as e:
        spyre.compile(str(bad))
    assert str(e.value).startswith(str(bad) + ":2:")
    code, _, err = run_cli("compile", str(bad), "-o", str(tmp_path / "p.spyre"))
    assert code == 1
    assert str(e.value).splitlines()[0] == first_error_line(err)


def test_missing_model_file(tmp_path):
    with pytest.raises(spyre.InputError) as e:
        spyre.compile(str(tmp_path / "none.onnx"))
    assert str(e.value).startswith(str(tmp_path / "none.onnx") + ": error: ")


def test_bad_options_are_usage_errors():
    with pytest.raises(spyre.UsageError) as e:
        spyre.compile(MLP, level=3)
    assert str(e.value) == "spyre.compile: error: level is 0, 1 or 2, got 3"
    assert e.value.exit_code == 2
    with pytest.raises(spyre.UsageError) as e:
        spyre.compile(MLP, level="2")
    assert str(e.value) == "spyre.compile: error: level is 0, 1 or 2, got '2'"
    with pytest.raises(spyre.UsageError) as e:
        spyre.compile(MLP, levle=1)
    assert str(e.value) == ("spyre.compile: error: unknown option 'levle' "
                            "(options: level, config, shapes, host_fallback)")
    with pytest.raises(spyre.UsageError) as e:
        spyre.compile(MLP, shapes={"x": (1, -16)})
    assert str(e.value).startswith("--shape: error: ")
    with pytest.raises(spyre.UsageError):
        spyre.compile(MLP, config="configs/spyre.yaml")


def test_run_options(mlp):
    with pytest.raises(spyre.UsageError) as e:
        mlp.run()
    assert str(e.value) == (
        "Program.run: error: the model has inputs; give them as a dict of "
        "arrays, or seed=N for random ones (or timing_only=True)")
    with pytest.raises(spyre.UsageError):
        mlp.run(seed=1, timing_only=True)
    with pytest.raises(spyre.UsageError):
        mlp.run({"x": np.zeros((1, 16, 64), np.float32)}, seed=1)
    with pytest.raises(spyre.UsageError):
        mlp.run(timing_only=True).check()


def test_bad_inputs_are_input_errors(mlp):
    with pytest.raises(spyre.InputError) as e:
        mlp.run({})
    assert str(e.value) == "Program.run: error: at 'x': missing input 'x' (inputs: x)"
    with pytest.raises(spyre.InputError) as e:
        mlp.run({"x": np.zeros((1, 64, 16), np.float32)})
    assert str(e.value) == ("Program.run: error: at 'x': input 'x' has shape "
                            "[1, 64, 16] but the model expects [1, 16, 64]")
    with pytest.raises(spyre.InputError) as e:
        mlp.run({"x": np.zeros((1, 16, 64), np.int64)})
    assert str(e.value) == ("Program.run: error: at 'x': input 'x' is int64; the "
                            "device takes float32, float16, int8 or int32 "
                            "(native byte order)")
    with pytest.raises(spyre.InputError) as e:
        mlp.run({"x": np.zeros((1, 16, 64), np.float32), "z": np.zeros(1)})
    assert "at 'z': names no input of the model" in str(e.value)


def test_config_errors(tmp_path, run_cli):
    c = spyre.Config()
    with pytest.raises(spyre.UsageError) as e:
        c.set("lx.size", 1)
    assert str(e.value).startswith("Config.set: error: at 'lx.size': unknown config key")
    with pytest.raises(spyre.UsageError) as e:
        c.set("chip.cores", "many")
    assert str(e.value) == "Config.set: error: at 'chip.cores': takes an integer, got many"
    with pytest.raises(spyre.UsageError):
        c.set("chip.cores", True)
    # A value out of range: the config's own check, the config unchanged.
    with pytest.raises(spyre.InputError) as e:
        c.set("chip.cores", 0)
    assert str(e.value).startswith("Config.set: error: at 'chip.cores': ")
    assert c.fingerprint == spyre.Config().fingerprint

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nchip:\n  cores: -1\n")
    with pytest.raises(spyre.InputError) as e:
        spyre.Config.load(str(bad))
    code, _, err = run_cli("config", "check", str(bad))
    assert code == 1
    assert str(e.value).splitlines()[0] == first_error_line(err)


def test_check_failure_is_a_check_error(mlp):
    result = mlp.run({"x": np.load(example("torch_mlp", "x.npy"))})
    with pytest.raises(spyre.CheckError) as e:
        result.check({"y": np.zeros((1, 16, 64), np.float32)})
    assert e.value.exit_code == 3
    assert "  y  MISMATCH: " in str(e.value)
    assert "against expected['y']" in str(e.value)


def test_writers_refuse_an_input_and_an_unwritable_path(mlp, tmp_path):
    result = mlp.run(timing_only=True)
    with pytest.raises(spyre.UsageError):
        result.write_trace(MLP)
    with pytest.raises(spyre.Error):
        result.write_report(str(tmp_path / "no" / "such" / "dir" / "r.html"))


def test_host_fallback_off_is_the_commands_error(tmp_path, run_cli):
    model = os.path.join(ROOT, "tests", "data", "onnx-host", "matmul_sin", "model.onnx")
    # With the fallback the Sin runs on the host, and its numbers pass.
    result = spyre.compile(model).run(seed=1)
    assert "ok" in result.check()
    with pytest.raises(spyre.InputError) as e:
        spyre.compile(model, host_fallback=False)
    code, _, err = run_cli("compile", model, "-o", str(tmp_path / "p.spyre"),
                           "--no-fallback")
    assert code == 1
    assert str(e.value) == err.rstrip("\n")
    assert "op type 'Sin' is not supported" in str(e.value)


def test_bad_sweep_spec_is_the_commands_input_error(tmp_path, run_cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("models: [%s]\ngrid:\n  chip.cores: [8, 16]\n  lx.sizes: [1]\n"
                    % example("mlp_block", "model.json"))
    with pytest.raises(spyre.InputError) as e:
        spyre.sweep(str(spec))
    code, _, err = run_cli("sweep", str(spec), "-o", str(tmp_path / "out"))
    assert code == 1
    assert str(e.value).startswith(str(spec) + ":4:3: error: unknown config key 'lx.sizes'")
    assert str(e.value).splitlines()[0] == err.splitlines()[0]
    with pytest.raises(spyre.UsageError):
        spyre.sweep(str(spec), jobs=2)
