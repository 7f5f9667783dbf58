"""The package's API against the `spyre` command: the same cycles,
statistics, trace and output bytes for the same model and inputs, PyTorch's
own outputs as the reference of the numbers, and the GIL released while a
simulation runs."""

import gzip
import json
import os
import threading
import time

import numpy as np
import pytest

import spyre
from conftest import ROOT, example

MLP = example("torch_mlp", "model.onnx")


@pytest.fixture(scope="module")
def mlp():
    return spyre.compile(MLP)


@pytest.fixture(scope="module")
def mlp_result(mlp):
    return mlp.run({"x": np.load(example("torch_mlp", "x.npy"))})


def test_program_describes_the_model(mlp):
    assert mlp.name == "torch_mlp"
    assert mlp.level == 2
    assert mlp.inputs == {"x": (1, 16, 64)}
    assert mlp.input_dtypes == {"x": "float32"}
    assert mlp.outputs == {"y": (1, 16, 64)}
    assert mlp.config.fingerprint == spyre.Config().fingerprint


def test_outputs_match_pytorch_within_the_run_tolerance(mlp_result):
    y = mlp_result.outputs["y"]
    expected = np.load(example("torch_mlp", "expected_y.npy"))
    assert y.dtype == np.float32 and y.shape == expected.shape
    # docs/compiler.md: 8 DL16 roundings of 2^-8 relative, over
    # |expected| + its mean magnitude.
    scale = 8 * 2.0 ** -8
    allowed = scale * (np.abs(expected) + np.abs(expected).mean())
    assert np.all(np.abs(y - expected) <= allowed)
    # DL16 is not float32: the device's numbers are not PyTorch's bits.
    assert not np.array_equal(y, expected)
    assert "ok: 1024 elements against expected['y']" in mlp_result.check({"y": expected})


def test_same_run_as_the_command(mlp_result, run_cli, tmp_path):
    stats, trace, outputs = tmp_path / "s.json", tmp_path / "t.json", tmp_path / "out"
    code, out, err = run_cli("run", MLP, "--inputs", example("torch_mlp"),
                             "--stats", str(stats), "--trace", str(trace),
                             "--outputs", str(outputs))
    assert code == 0, err
    assert "cycles     %d (" % mlp_result.cycles in out
    assert mlp_result.stats_json == stats.read_text()
    assert mlp_result.stats == json.loads(stats.read_text())
    assert mlp_result.stats["total_cycles"] == mlp_result.cycles
    assert np.array_equal(np.load(outputs / "y.npy"), mlp_result.outputs["y"])
    mine = tmp_path / "mine.json"
    mlp_result.write_trace(str(mine))
    assert mine.read_bytes() == trace.read_bytes()
    # A .gz name gets the same trace gzipped, as the command writes it.
    zipped = tmp_path / "mine.json.gz"
    mlp_result.write_trace(str(zipped))
    assert gzip.decompress(zipped.read_bytes()) == trace.read_bytes()
    mine_stats = tmp_path / "mine-stats.json"
    mlp_result.write_stats(str(mine_stats))
    assert mine_stats.read_bytes() == stats.read_bytes()


def test_report_is_the_commands_report(mlp_result, run_cli, tmp_path):
    trace, cli_html, html = tmp_path / "t.json", tmp_path / "cli.html", tmp_path / "r.html"
    mlp_result.write_trace(str(trace))
    code, _, err = run_cli("report", str(trace), "-o", str(cli_html))
    assert code == 0, err
    mlp_result.write_report(str(html))
    assert html.read_text() == cli_html.read_text()


def test_saved_program_is_what_the_command_compiles(mlp, run_cli, tmp_path):
    mine, theirs = tmp_path / "mine.spyre", tmp_path / "cli.spyre"
    mlp.save(str(mine))
    code, _, err = run_cli("compile", MLP, "-o", str(theirs))
    assert code == 0, err
    assert mine.read_bytes() == theirs.read_bytes()
    code, out, err = run_cli("sim", str(mine), "--timing-only")
    assert code == 0, err
    assert str(mlp.run(timing_only=True).cycles) in out


def test_summary_and_figures(mlp_result):
    text = mlp_result.summary()
    assert text.startswith("model      torch_mlp (%s)\n" % MLP)
    assert "inputs     given in memory\n" in text
    # torch_mlp: 16 x 64 x 256 MACs per linear, two linears.
    assert mlp_result.macs == 2 * 16 * 64 * 256
    assert mlp_result.findings == []
    assert mlp_result.exit_code == 0
    assert mlp_result.simulated_us == pytest.approx(mlp_result.cycles / 1500.0)
    assert mlp_result.tflops == pytest.approx(2 * mlp_result.macs / (mlp_result.simulated_us * 1e6))


def test_float64_inputs_are_taken_as_float32(mlp, mlp_result):
    x = np.load(example("torch_mlp", "x.npy"))
    again = mlp.run({"x": x.astype(np.float64)})
    assert np.array_equal(again.outputs["y"], mlp_result.outputs["y"])
    assert again.cycles == mlp_result.cycles


def test_seed_and_timing_only_are_the_commands(mlp, run_cli):
    code, out, _ = run_cli("run", MLP, "--seed", "5")
    assert code == 0
    r = mlp.run(seed=5)
    assert "cycles     %d (" % r.cycles in out
    t = mlp.run(timing_only=True)
    assert t.outputs == {}
    assert t.cycles == r.cycles  # timing does not depend on the numbers
    code, out, _ = run_cli("run", MLP, "--timing-only")
    assert "cycles     %d (" % t.cycles in out


def test_graph_json_model_with_its_host_reference():
    program = spyre.compile(example("mlp_block", "model.json"), level=0)
    result = program.run(seed=1)
    assert "against the host reference" in result.check()
    # mlp_block: 7 x 64 x 128 MACs per linear, two linears.
    assert result.macs == 2 * 7 * 64 * 128


def test_config_load_set_and_fingerprint(run_cli, tmp_path):
    builtin = spyre.Config()
    code, out, _ = run_cli("config", "fingerprint")
    assert builtin.fingerprint == out.strip()
    loaded = spyre.Config.load(os.path.join(ROOT, "configs", "spyre.yaml"))
    assert loaded.fingerprint == builtin.fingerprint

    small = spyre.Config()
    small.set("chip.cores", 8)
    assert small.get("chip.cores") == 8
    assert builtin.get("chip.cores") == 32
    path = tmp_path / "small.yaml"
    path.write_text(small.yaml())
    code, out, _ = run_cli("config", "fingerprint", "--config", str(path))
    assert small.fingerprint == out.strip() != builtin.fingerprint

    on8 = spyre.compile(MLP, config=small).run(seed=3)
    code, out, _ = run_cli("run", MLP, "--config", str(path), "--seed", "3")
    assert "cycles     %d (" % on8.cycles in out
    assert on8.cycles != spyre.compile(MLP).run(seed=3).cycles


def test_config_update_validates_once():
    c = spyre.Config()
    c.update({"memory.peak_gb_per_s": 409.6,
              "memory.sustained_read_gb_per_s": 300.0,
              "memory.sustained_mixed_gb_per_s": 210.0})
    assert c.get("memory.sustained_read_gb_per_s") == 300.0


def test_simulation_releases_the_gil():
    program = spyre.compile(example("gpt_decoder", "model.onnx"))
    runs, elapsed = 3, []

    def work():
        start = time.monotonic()
        for seed in range(runs):
            program.run(seed=seed)
        elapsed.append(time.monotonic() - start)

    worker = threading.Thread(target=work)
    worker.start()
    # This thread wakes every millisecond; a run holding the GIL would keep
    # it asleep for the whole run.
    longest, last = 0.0, time.monotonic()
    while worker.is_alive():
        time.sleep(0.001)
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    worker.join()
    assert longest < elapsed[0] / runs / 2, (longest, elapsed)


def test_compiles_and_runs_in_threads_are_those_of_one_thread():
    models = [MLP, example("gpt_decoder", "model.onnx"),
              example("llama_block", "model.onnx"), example("gpt_block", "model.json")]
    threaded = {}

    def work(i):
        result = spyre.compile(models[i % len(models)]).run(seed=7)
        threaded[i] = (result.stats_json, result.outputs)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2 * len(models))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(threaded) == 2 * len(models)
    for i, model in enumerate(models):
        alone = spyre.compile(model).run(seed=7)
        for stats, outputs in (threaded[i], threaded[i + len(models)]):
            assert stats == alone.stats_json
            assert outputs.keys() == alone.outputs.keys()
            assert all(np.array_equal(outputs[k], alone.outputs[k]) for k in outputs)


def test_sweep_rows_are_the_commands_results(run_cli, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("models:\n  - %s\ngrid:\n  chip.cores: [8, 16]\n"
                    "  lx.size_bytes: [1048576, 2097152]\n"
                    % example("mlp_block", "model.json"))
    rows = spyre.sweep(str(spec), tmp_path / "mine")
    if not isinstance(rows, list):  # pandas is installed
        rows = rows.to_dict("records")
    code, _, err = run_cli("sweep", str(spec), "-o", str(tmp_path / "cli"))
    assert code == 0, err
    import csv
    with open(tmp_path / "cli" / "results.csv") as f:
        cli = list(csv.DictReader(f))
    with open(tmp_path / "mine" / "results.csv") as f:
        mine_csv = list(csv.DictReader(f))
    assert len(rows) == len(cli) == 4
    wall = {"compile_s", "simulate_s", "wall_s"}
    for row, theirs, mine in zip(rows, cli, mine_csv):
        assert {k: v for k, v in mine.items() if k not in wall} == \
            {k: v for k, v in theirs.items() if k not in wall}
        assert row["status"] == "ok"
        assert row["cycles"] == int(theirs["cycles"])
        assert row["chip.cores"] == int(theirs["chip.cores"])
        assert row["achieved_tflops"] == float(theirs["achieved_tflops"])
        assert row["error"] is None
    # A second call finds every result and runs nothing again.
    points = sorted((tmp_path / "mine" / "points").glob("*.json"))
    assert len(points) == 4
    before = [p.stat().st_mtime_ns for p in points]
    again = spyre.sweep(str(spec), tmp_path / "mine")
    assert len(again) == 4
    assert [p.stat().st_mtime_ns for p in points] == before


TINY = os.path.join(ROOT, "examples", "llm", "tiny-granite.json")


def test_llm_step_is_the_commands(run_cli):
    # The same step as `spyre llm --mode decode --embedding --lm-head
    # --timing-only`: the same cycles and the same figures.
    r = spyre.llm(TINY, "decode", batch=2, context=128)
    code, out, err = run_cli("llm", TINY, "--mode", "decode", "--batch", "2",
                             "--context", "128", "--embedding", "--lm-head",
                             "--timing-only")
    assert code == 0, err
    assert "cycles     %d (" % r["cycles"] in out
    # Every line but the compile's wall time.
    def steady(text):
        return [line for line in text.splitlines()
                if not line.startswith("compile ")]
    assert steady(r["summary"]) == steady(out)[-len(steady(r["summary"])):]
    assert (r["mode"], r["batch"], r["tokens"], r["context"]) == \
        ("decode", 2, 1, 128)
    assert r["layers"] == r["model_layers"] == 2
    assert r["looped"] and not r["extrapolated"]
    assert r["model_us"] == r["step_us"]
    assert 0 < r["bound_reached"] <= 1
    assert r["bound_us"] == max(r["memory_bound_us"], r["compute_bound_us"])
    assert r["cache_bytes"] > 0 and r["host_ops"] == 0 and r["findings"] == []


def test_llm_defaults_layers_and_config():
    # Prefill takes 512 tokens by default; fewer layers extrapolate; a
    # spyre.Config is the hardware, and a faster memory makes a faster step.
    first = spyre.llm(TINY, "prefill", layers=1, tokens=64)
    assert (first["batch"], first["tokens"], first["context"]) == (1, 64, 0)
    assert first["extrapolated"] and first["layers"] == 1
    assert first["model_us"] == pytest.approx(
        first["step_us"] * 2, rel=0.3)  # the head is not scaled
    assert spyre.llm(TINY, "prefill")["tokens"] == 512
    # A prefill after cached tokens reads them too.
    later = spyre.llm(TINY, "prefill", tokens=64, context=192)
    assert (later["tokens"], later["context"]) == (64, 192)
    assert later["cache_bytes"] > 0 == first["cache_bytes"]
    fast = spyre.Config()
    fast.update({"memory.peak_gb_per_s": 409.6,
                 "memory.sustained_read_gb_per_s": 300.0})
    default = spyre.llm(TINY, "decode", batch=1, context=256)
    quicker = spyre.llm(TINY, "decode", batch=1, context=256, config=fast)
    assert quicker["cycles"] < default["cycles"]


def test_llm_bad_arguments_are_usage_errors():
    for kwargs, message in [
            ({"mode": "train"}, "mode is 'prefill' or 'decode'"),
            ({"batch": 0}, "batch is an int of at least 1"),
            ({"tokens": True}, "tokens is an int of at least 1"),
            ({"level": 3}, "level is 0, 1 or 2"),
            ({"config": "spyre.yaml"}, "config is a spyre.Config"),
            ({"seed": 1}, "unknown option 'seed'")]:
        with pytest.raises(spyre.UsageError, match=message):
            spyre.llm(TINY, **kwargs)
    with pytest.raises(spyre.InputError):
        spyre.llm(os.path.join(ROOT, "examples", "llm", "missing.json"))


def test_generate_is_the_commands_and_matches_the_reference(run_cli):
    # A prompt of 70 tokens in chunks of 32, 32 and 6, paged, then two
    # decode steps: the command's tokens and figures, and the reference's
    # tokens.
    r = spyre.generate(TINY, 2, prompt=70, batch=2, chunk=32, paged=True,
                       check=True)
    code, out, err = run_cli("llm", TINY, "--generate", "2", "--prompt", "70",
                             "--batch", "2", "--chunk", "32", "--paged",
                             "--check")
    assert code == 0, err
    assert r["ok"] and r["findings"] == 0
    assert r["summary"] == out
    assert r["prefill_steps"] == 3
    assert [s["kind"] for s in r["steps"]] == ["prefill"] * 3 + ["decode"] * 2
    assert [s["positions"] for s in r["steps"]] == \
        [[0, 0], [32, 32], [64, 64], [70, 70], [71, 71]]
    assert r["ttft_us"] == pytest.approx(
        sum(s["total_us"] for s in r["steps"][:3]))
    assert len(r["tokens"]) == 2 and all(len(t) == 3 for t in r["tokens"])
    for seq, check in zip(r["tokens"], r["check"]):
        assert check["tokens_equal"] and check["reference"] == seq
        assert check["logits_outside"] == 0
        assert check["max_abs_diff"] <= check["allowed"]
    assert [len(p) for p in r["prompts"]] == [70, 70]
    assert len(r["block_tables"]) == 2


def test_generate_timing_only_and_bad_arguments():
    # Timing only: no tokens; context starts without a prompt.
    t = spyre.generate(TINY, 1, context=300, timing_only=True)
    assert t["tokens"] == [] and t["ttft_us"] is None and t["check"] is None
    assert [s["positions"] for s in t["steps"]] == [[300]]
    assert t["per_token_us"] == t["steps"][0]["total_us"]
    for kwargs, message in [
            ({"steps": 0}, "steps is an int of at least 1"),
            ({"chunk": 0}, "chunk is an int of at least 1"),
            ({"prompt": 8, "context": 8}, "give one of them"),
            ({"level": "2"}, "level is 0, 1 or 2"),
            ({"config": "spyre.yaml"}, "config is a spyre.Config"),
            ({"mode": "decode"}, "unknown option 'mode'")]:
        with pytest.raises(spyre.UsageError, match=message):
            spyre.generate(TINY, **kwargs)
    # The library's own checks come back as usage errors too.
    with pytest.raises(spyre.UsageError, match="only --timing-only allows"):
        spyre.generate(TINY, 1, context=8)
