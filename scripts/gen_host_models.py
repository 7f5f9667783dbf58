#!/usr/bin/python3
"""Writes the ONNX models of the host-fallback tests (tests/data/onnx-host/).

Each model has an op the device does not run between device ops, so that
the host op reads what the device wrote and the device reads what the host
wrote. Folder layout as scripts/gen_onnx_models.py:

    tests/data/onnx-host/<name>/model.onnx
    tests/data/onnx-host/<name>/inputs/<input>.npy
    tests/data/onnx-host/<name>/expected/<output>.npy   NumPy, float64 math

`partly_unsupported.onnx` has a node that neither the device nor the host
runs (Hardmax), for the coverage listing. Fixed seeds: the output is the
same on every run.

    /usr/bin/python3 scripts/gen_host_models.py
"""

import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "onnx-host")
F32 = TensorProto.FLOAT


def rand(seed, *shape, scale=1.0):
    g = np.random.default_rng(seed)
    return (g.standard_normal(shape) * scale).astype(np.float32)


def make(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, F32, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, F32, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="gen_host_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def save(name, m, inputs, expected):
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "inputs"))
    os.makedirs(os.path.join(folder, "expected"))
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for k, v in inputs.items():
        np.save(os.path.join(folder, "inputs", k + ".npy"), v)
    for k, v in expected.items():
        np.save(os.path.join(folder, "expected", k + ".npy"),
                v.astype(np.float32))


def gen_matmul_sin():
    """MatMul -> Sin (host) -> MatMul."""
    x = rand(1, 8, 64)
    w1 = rand(2, 64, 64, scale=0.125)
    w2 = rand(3, 64, 32, scale=0.125)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
        helper.make_node("Sin", ["h"], ["s"], name="sin"),
        helper.make_node("MatMul", ["s", "w2"], ["y"], name="mm2"),
    ]
    m = make("matmul_sin", nodes, [("x", [8, 64])], [("y", [8, 32])],
             {"w1": w1, "w2": w2})
    y = np.sin(x.astype(np.float64) @ w1) @ w2
    save("matmul_sin", m, {"x": x}, {"y": y})


def gen_matmul_slice():
    """MatMul -> Slice (host, constant starts/ends/axes) -> MatMul -> Relu."""
    x = rand(4, 8, 128)
    w1 = rand(5, 128, 128, scale=0.09)
    w2 = rand(6, 64, 64, scale=0.125)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
        helper.make_node("Slice", ["h", "starts", "ends", "axes"], ["s"],
                         name="slice"),
        helper.make_node("MatMul", ["s", "w2"], ["m"], name="mm2"),
        helper.make_node("Relu", ["m"], ["y"], name="relu"),
    ]
    inits = {"w1": w1, "w2": w2,
             "starts": np.array([32], np.int64),
             "ends": np.array([96], np.int64),
             "axes": np.array([1], np.int64)}
    m = make("matmul_slice", nodes, [("x", [8, 128])], [("y", [8, 64])],
             inits)
    h = x.astype(np.float64) @ w1
    y = np.maximum(h[:, 32:96] @ w2, 0)
    save("matmul_slice", m, {"x": x}, {"y": y})


def gen_partly_unsupported():
    """Exp (device) -> Sin (host) -> Hardmax (neither) -> Relu (device)."""
    nodes = [
        helper.make_node("Exp", ["x"], ["e"], name="exp"),
        helper.make_node("Sin", ["e"], ["s"], name="sin"),
        helper.make_node("Hardmax", ["s"], ["h"], name="hardmax"),
        helper.make_node("Relu", ["h"], ["y"], name="relu"),
    ]
    m = make("partly_unsupported", nodes, [("x", [4, 64])], [("y", [4, 64])],
             {})
    onnx.save(m, os.path.join(OUT, "partly_unsupported.onnx"))


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    gen_matmul_sin()
    gen_matmul_slice()
    gen_partly_unsupported()


if __name__ == "__main__":
    main()
