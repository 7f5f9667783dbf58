#!/usr/bin/python3
"""Writes the small ONNX models the importer's tests read (tests/data/onnx/).

Each good model gets a folder:

    tests/data/onnx/<name>/model.onnx
    tests/data/onnx/<name>/inputs/<input>.npy      fixed inputs (float32)
    tests/data/onnx/<name>/expected/<output>.npy   NumPy's answer (float32)

The expected outputs are computed here with NumPy in float64 from the
float32 inputs and weights (then stored as float32), independently of the
compiler, which must match them within 1e-5 relative. Bad models go to
tests/data/onnx/bad/<name>.onnx; the tests hold the error each must give.

Run with Debian's python3 (it has the onnx package); the output is the same
on every run (fixed seeds), so committed files only change when this script
does:

    /usr/bin/python3 scripts/gen_onnx_models.py

It also writes one Granite-shaped decoder layer of any size, as PyTorch
exports it (granite_layer below; weights as inputs, so the file is small),
by default Granite-3.3-8B's prefill layer (512 tokens, no past); `--past N
--tokens 1 --batch 4` makes the decode layer:

    /usr/bin/python3 scripts/gen_onnx_models.py --granite-layer OUT.onnx \
        [--hidden 4096] [--heads 32] [--kv-heads 8] [--head-dim 128] \
        [--ffn 12800] [--tokens 512] [--past 0] [--batch 1] [--no-present] \
        [--vocab 49159]
"""

import math
import os
import shutil
import sys

import numpy as np
import onnx
import onnx.external_data_helper
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "onnx")

F32 = TensorProto.FLOAT
F16 = TensorProto.FLOAT16


def rng(seed):
    return np.random.default_rng(seed)


def rand(seed, *shape, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def tensor_info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="gen_onnx_models.py",
    )
    # This onnx (1.12) knows opsets up to 17 and checks nothing newer.
    if opset <= 17:
        onnx.checker.check_model(m)
    return m


def save_good(name, m, inputs, expected):
    """`inputs` and `expected`: dicts of name -> array."""
    folder = os.path.join(OUT, name)
    os.makedirs(os.path.join(folder, "inputs"))
    os.makedirs(os.path.join(folder, "expected"))
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for k, v in inputs.items():
        np.save(os.path.join(folder, "inputs", k + ".npy"), np.ascontiguousarray(v))
    for k, v in expected.items():
        np.save(os.path.join(folder, "expected", k + ".npy"),
                np.ascontiguousarray(v, dtype=np.float32))


def save_bad(name, data):
    path = os.path.join(OUT, "bad", name + ".onnx")
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.SerializeToString())


def f64(a):
    return np.asarray(a, dtype=np.float64)


erf = np.vectorize(math.erf)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm(x, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


# ---- Good models, one per op family ----


def gen_matmul():
    a, b = rand(1, 3, 4), rand(2, 2, 4, 5)
    v, w = rand(3, 4), rand(4, 4, 2)
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["batched"], name="mm_batched"),
        helper.make_node("MatMul", ["v", "w"], ["vec_mat"], name="mm_vector"),
        helper.make_node("MatMul", ["a", "v"], ["mat_vec"], name="mm_column"),
    ]
    m = model("matmul", nodes,
              [tensor_info("a", F32, [3, 4]), tensor_info("b", F32, [2, 4, 5]),
               tensor_info("v", F32, [4])],
              [tensor_info("batched", F32, [2, 3, 5]),
               tensor_info("vec_mat", F32, [2]),
               tensor_info("mat_vec", F32, [3])],
              [init("w", w)])
    save_good("matmul", m, {"a": a, "b": b, "v": v},
              {"batched": f64(a) @ f64(b), "vec_mat": f64(v) @ f64(w),
               "mat_vec": f64(a) @ f64(v)})


def gen_gemm():
    a, bt, c = rand(4, 5, 3), rand(5, 4, 5), rand(6, 4)
    x, w, bias = rand(7, 3, 6), rand(8, 4, 6), rand(9, 4)
    nodes = [
        helper.make_node("Gemm", ["a", "bt", "c"], ["y"], name="gemm_all",
                         alpha=0.25, beta=-1.5, transA=1, transB=1),
        helper.make_node("Gemm", ["x", "w", "bias"], ["linear"], name="fc",
                         transB=1),
        helper.make_node("Gemm", ["x", "wt"], ["plain"], name="gemm_plain"),
    ]
    m = model("gemm", nodes,
              [tensor_info("a", F32, [5, 3]), tensor_info("x", F32, [3, 6])],
              [tensor_info("y", F32, [3, 4]), tensor_info("linear", F32, [3, 4]),
               tensor_info("plain", F32, [3, 4])],
              [init("bt", bt), init("c", c), init("w", w), init("bias", bias),
               init("wt", w.T.copy())])
    save_good("gemm", m, {"a": a, "x": x},
              {"y": 0.25 * (f64(a).T @ f64(bt).T) - 1.5 * f64(c),
               "linear": f64(x) @ f64(w).T + f64(bias),
               "plain": f64(x) @ f64(w).T})


def gen_elementwise():
    x, y = rand(10, 2, 3, 4), rand(11, 3, 4)
    k = np.array([[0.5], [2.0], [-1.0]], dtype=np.float32)
    nodes = [
        helper.make_node("Add", ["x", "y"], ["sum"], name="add"),
        helper.make_node("Sub", ["sum", "k"], ["diff"], name="sub"),
        helper.make_node("Mul", ["diff", "x"], ["prod"], name="mul"),
        helper.make_node("Div", ["prod", "den"], ["quot"], name="div"),
    ]
    den = np.array(4.0, dtype=np.float32)
    m = model("elementwise", nodes,
              [tensor_info("x", F32, [2, 3, 4]), tensor_info("y", F32, [3, 4])],
              [tensor_info("quot", F32, [2, 3, 4])],
              [init("k", k), init("den", den)])
    q = (f64(x) + f64(y) - f64(k)) * f64(x) / 4.0
    save_good("elementwise", m, {"x": x, "y": y}, {"quot": q})


def gen_unary():
    x = rand(12, 2, 5)
    three = np.array(3.0, dtype=np.float32)
    nodes = [
        helper.make_node("Abs", ["x"], ["abs"], name="abs"),
        helper.make_node("Sqrt", ["abs"], ["sqrt"], name="sqrt"),
        helper.make_node("Reciprocal", ["sqrt"], ["recip"], name="recip"),
        helper.make_node("Neg", ["x"], ["neg"], name="neg"),
        helper.make_node("Exp", ["neg"], ["exp"], name="exp"),
        helper.make_node("Erf", ["x"], ["erf"], name="erf"),
        helper.make_node("Tanh", ["x"], ["tanh"], name="tanh"),
        helper.make_node("Sigmoid", ["x"], ["sigmoid"], name="sigmoid"),
        helper.make_node("Relu", ["x"], ["relu"], name="relu"),
        helper.make_node("Pow", ["x", "three"], ["cube"], name="cube"),
    ]
    outs = ["recip", "exp", "erf", "tanh", "sigmoid", "relu", "cube"]
    m = model("unary", nodes, [tensor_info("x", F32, [2, 5])],
              [tensor_info(o, F32, [2, 5]) for o in outs], [init("three", three)])
    d = f64(x)
    save_good("unary", m, {"x": x},
              {"recip": 1 / np.sqrt(np.abs(d)), "exp": np.exp(-d),
               "erf": erf(d), "tanh": np.tanh(d),
               "sigmoid": 1 / (1 + np.exp(-d)), "relu": np.maximum(d, 0),
               "cube": d ** 3})


def gen_softmax():
    x = rand(13, 2, 3, 5, scale=3.0)
    nodes = [
        helper.make_node("Softmax", ["x"], ["last"], name="sm_last"),
        helper.make_node("Softmax", ["x"], ["middle"], name="sm_middle", axis=1),
    ]
    m = model("softmax", nodes, [tensor_info("x", F32, [2, 3, 5])],
              [tensor_info("last", F32, [2, 3, 5]),
               tensor_info("middle", F32, [2, 3, 5])], opset=13)
    save_good("softmax", m, {"x": x},
              {"last": softmax(f64(x), -1), "middle": softmax(f64(x), 1)})


def gen_layernorm():
    x = rand(14, 2, 3, 8, scale=2.0)
    g, b = rand(15, 8), rand(16, 8)
    g2, b2 = rand(17, 3, 8), rand(18, 3, 8)
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"],
                         name="ln_last", epsilon=1e-5),
        helper.make_node("LayerNormalization", ["x", "g2", "b2"], ["ln1", "mean", "inv_std"],
                         name="ln_axis1", axis=1, epsilon=1e-3),
    ]
    m = model("layernorm", nodes, [tensor_info("x", F32, [2, 3, 8])],
              [tensor_info("ln", F32, [2, 3, 8]), tensor_info("ln1", F32, [2, 3, 8]),
               tensor_info("mean", F32, [2, 1, 1]),
               tensor_info("inv_std", F32, [2, 1, 1])],
              [init("g", g), init("b", b), init("g2", g2), init("b2", b2)])
    d = f64(x)
    mean = d.mean(axis=(1, 2), keepdims=True)
    var = ((d - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    # Epsilon as the float32 attribute holds it.
    eps3 = float(np.float32(1e-3))
    save_good("layernorm", m, {"x": x},
              {"ln": layernorm(d, -1, float(np.float32(1e-5))) * f64(g) + f64(b),
               "ln1": layernorm(d, 1, eps3) * f64(g2) + f64(b2),
               "mean": mean, "inv_std": 1 / np.sqrt(var + eps3)})


def gen_reduce():
    x = rand(19, 2, 3, 4)
    axes = np.array([0, 2], dtype=np.int64)
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mean"], name="mean", axes=[-1]),
        helper.make_node("ReduceSum", ["x", "axes"], ["sum"], name="sum", keepdims=0),
        helper.make_node("ReduceMax", ["x"], ["max"], name="max", axes=[1], keepdims=0),
        helper.make_node("ReduceSum", ["x"], ["total"], name="total"),
    ]
    m = model("reduce", nodes, [tensor_info("x", F32, [2, 3, 4])],
              [tensor_info("mean", F32, [2, 3, 1]), tensor_info("sum", F32, [3]),
               tensor_info("max", F32, [2, 4]), tensor_info("total", F32, [1, 1, 1])],
              [init("axes", axes)], opset=13)
    d = f64(x)
    save_good("reduce", m, {"x": x},
              {"mean": d.mean(axis=-1, keepdims=True), "sum": d.sum(axis=(0, 2)),
               "max": d.max(axis=1), "total": d.sum(keepdims=True)})


def gen_shapes():
    x = rand(20, 2, 3, 4)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[2, 0, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["r"], name="reshape"),
        helper.make_node("Split", ["r", "sizes"], ["s0", "s1"], name="split", axis=1),
        helper.make_node("Constant", [], ["c"], name="const",
                         value=init("c_value", np.full((4, 1), 0.5, np.float32))),
        helper.make_node("Concat", ["s1", "c", "s0"], ["cat"], name="concat", axis=-1),
        helper.make_node("Unsqueeze", ["cat", "uaxes"], ["u"], name="unsqueeze"),
        helper.make_node("Squeeze", ["u", "saxes"], ["sq"], name="squeeze"),
        helper.make_node("Identity", ["sq"], ["out"], name="identity"),
        helper.make_node("Transpose", ["x"], ["rev"], name="reverse"),
    ]
    m = model("shapes", nodes, [tensor_info("x", F32, [2, 3, 4])],
              [tensor_info("out", F32, [4, 7]), tensor_info("rev", F32, [4, 3, 2])],
              [init("shape", np.array([0, -1], np.int64)),
               init("sizes", np.array([2, 4], np.int64)),
               init("uaxes", np.array([0, 3], np.int64)),
               init("saxes", np.array([0, -1], np.int64))])
    r = np.transpose(f64(x), (2, 0, 1)).reshape(4, 6)
    cat = np.concatenate([r[:, 2:], np.full((4, 1), 0.5), r[:, :2]], axis=-1)
    save_good("shapes", m, {"x": x},
              {"out": cat,
               "rev": np.transpose(f64(x), (2, 1, 0))})


def gen_where():
    x, y = rand(21, 2, 4), rand(22, 2, 4)
    cond = np.array([[True, False, True, False], [False, False, True, True]])
    row = np.array([True, False, False, True])
    fill = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
    nodes = [
        helper.make_node("Where", ["cond", "x", "y"], ["both"], name="where_both"),
        helper.make_node("Where", ["row", "x", "fill"], ["x_or_fill"], name="where_fill"),
        helper.make_node("Where", ["row", "fill", "y"], ["fill_or_y"], name="where_fill_first"),
    ]
    m = model("where", nodes,
              [tensor_info("x", F32, [2, 4]), tensor_info("y", F32, [2, 4])],
              [tensor_info("both", F32, [2, 4]), tensor_info("x_or_fill", F32, [2, 4]),
               tensor_info("fill_or_y", F32, [2, 4])],
              [init("cond", cond), init("row", row), init("fill", fill)], opset=16)
    save_good("where", m, {"x": x, "y": y},
              {"both": np.where(cond, f64(x), f64(y)),
               "x_or_fill": np.where(row, f64(x), f64(fill)),
               "fill_or_y": np.where(row, f64(fill), f64(y))})


def gen_float16():
    x = rand(23, 3, 4).astype(np.float16)
    half = np.array(0.5, np.float16)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "half"], ["y"], name="scale"),
    ]
    m = model("float16", nodes, [tensor_info("x", F16, [3, 4])],
              [tensor_info("y", F16, [3, 4])], [init("half", half)])
    # Exact in float16 as in double: a halving of a non-negative value.
    save_good("float16", m, {"x": x}, {"y": np.maximum(f64(x), 0) * 0.5})


def gen_dynamic_batch():
    """A batch dimension left symbolic, and a reshape whose target is computed
    from the input's shape (Shape -> Gather -> Unsqueeze -> Concat), as an
    exporter writes it with dynamic axes. Imports with --shape x=3,2,4."""
    x = rand(24, 3, 2, 4)
    w = rand(25, 8, 5)
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
        helper.make_node("Gather", ["x_shape", "zero"], ["batch"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch1"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="flatten"),
        helper.make_node("MatMul", ["flat", "w"], ["y"], name="proj"),
    ]
    m = model("dynamic_batch", nodes, [tensor_info("x", F32, ["batch", 2, 4])],
              [tensor_info("y", F32, ["batch", 5])],
              [init("zero", np.array(0, np.int64)),
               init("axes0", np.array([0], np.int64)),
               init("minus_one", np.array([-1], np.int64)), init("w", w)])
    save_good("dynamic_batch", m, {"x": x}, {"y": f64(x).reshape(3, 8) @ f64(w)})


# ---- Exporter patterns ----


def gen_gelu_erf():
    """nn.GELU() as torch.onnx exports it: (x * (1 + erf(x / sqrt 2))) * 0.5,
    after a projection."""
    x, w = rand(26, 4, 6), rand(27, 6, 8, scale=0.5)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
        helper.make_node("Div", ["h", "sqrt2"], ["h_scaled"], name="gelu_div"),
        helper.make_node("Erf", ["h_scaled"], ["h_erf"], name="gelu_erf"),
        helper.make_node("Add", ["h_erf", "one"], ["h_erf1"], name="gelu_add"),
        helper.make_node("Mul", ["h", "h_erf1"], ["h_mul"], name="gelu_mul"),
        helper.make_node("Mul", ["h_mul", "half"], ["y"], name="gelu_half"),
    ]
    m = model("gelu_erf", nodes, [tensor_info("x", F32, [4, 6])],
              [tensor_info("y", F32, [4, 8])],
              [init("w", w), init("sqrt2", np.array(1.4142135, np.float32)),
               init("one", np.array(1.0, np.float32)),
               init("half", np.array(0.5, np.float32))], opset=14)
    h = f64(x) @ f64(w)
    save_good("gelu_erf", m, {"x": x}, {"y": 0.5 * h * (1 + erf(h / math.sqrt(2)))})


def gen_rmsnorm():
    """Two RMSNorms as exporters write them: LLaMA's (pow, mean, add eps,
    sqrt, div, weight mul) and T5's without a weight (reciprocal and mul)."""
    x, z = rand(28, 2, 3, 8, scale=2.0), rand(29, 5, 8)
    weight = rand(30, 8)
    eps = np.array(1e-6, np.float32)
    nodes = [
        helper.make_node("Pow", ["x", "two"], ["x_sq"], name="rms_pow"),
        helper.make_node("ReduceMean", ["x_sq"], ["x_ms"], name="rms_mean", axes=[-1]),
        helper.make_node("Add", ["x_ms", "eps"], ["x_ms_eps"], name="rms_add"),
        helper.make_node("Sqrt", ["x_ms_eps"], ["x_rms"], name="rms_sqrt"),
        helper.make_node("Div", ["x", "x_rms"], ["x_norm"], name="rms_div"),
        helper.make_node("Mul", ["x_norm", "weight"], ["y"], name="rms_weight"),
        helper.make_node("Mul", ["z", "z"], ["z_sq"], name="t5_square"),
        helper.make_node("ReduceMean", ["z_sq"], ["z_ms"], name="t5_mean", axes=[1]),
        helper.make_node("Add", ["eps", "z_ms"], ["z_ms_eps"], name="t5_add"),
        helper.make_node("Sqrt", ["z_ms_eps"], ["z_rms"], name="t5_sqrt"),
        helper.make_node("Reciprocal", ["z_rms"], ["z_inv"], name="t5_reciprocal"),
        helper.make_node("Mul", ["z", "z_inv"], ["w"], name="t5_norm"),
    ]
    m = model("rmsnorm", nodes,
              [tensor_info("x", F32, [2, 3, 8]), tensor_info("z", F32, [5, 8])],
              [tensor_info("y", F32, [2, 3, 8]), tensor_info("w", F32, [5, 8])],
              [init("two", np.array(2.0, np.float32)), init("eps", eps),
               init("weight", weight)], opset=13)
    e = float(eps)
    dx, dz = f64(x), f64(z)
    save_good("rmsnorm", m, {"x": x, "z": z},
              {"y": dx / np.sqrt((dx ** 2).mean(-1, keepdims=True) + e) * f64(weight),
               "w": dz / np.sqrt((dz ** 2).mean(-1, keepdims=True) + e)})


def causal(t):
    return np.tril(np.ones((t, t), dtype=bool))


def gen_causal_mask():
    """Attention scores masked two ways before a softmax: an Add of a constant
    -inf upper triangle, and a Where on a constant lower-triangular condition
    with a large negative fill (HF's finfo.min style)."""
    t, d = 5, 4
    q, k = rand(31, 2, t, d), rand(32, 2, t, d)
    mask = np.where(causal(t), 0.0, -np.inf).astype(np.float32)[None, None]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"], name="qk"),
        helper.make_node("Add", ["scores", "mask"], ["masked_add"], name="mask_add"),
        helper.make_node("Softmax", ["masked_add"], ["p_add"], name="softmax_add"),
        helper.make_node("Where", ["keep", "scores", "fill"], ["masked_where"],
                         name="mask_where"),
        helper.make_node("Softmax", ["masked_where"], ["p_where"], name="softmax_where"),
    ]
    m = model("causal_mask", nodes,
              [tensor_info("q", F32, [2, t, d]), tensor_info("k", F32, [2, t, d])],
              [tensor_info("p_add", F32, [2, t, t]), tensor_info("p_where", F32, [2, t, t])],
              [init("mask", mask[0]), init("keep", causal(t)),
               init("fill", np.array(np.finfo(np.float32).min, np.float32))], opset=16)
    s = f64(q) @ np.transpose(f64(k), (0, 2, 1))
    p = softmax(np.where(causal(t), s, -np.inf), -1)
    save_good("causal_mask", m, {"q": q, "k": k}, {"p_add": p, "p_where": p})


def gen_attention_block():
    """A small pre-norm decoder block in the op vocabulary exporters use:
    LayerNormalization, a fused QKV projection split into two heads, causal
    attention with an additive mask, a residual, RMSNorm written out, and an
    MLP with the erf GELU."""
    t, d, heads = 8, 16, 2
    hd = d // heads
    x = rand(40, t, d)
    g1, b1 = rand(41, d), rand(42, d)
    wqkv, bqkv = rand(43, d, 3 * d, scale=0.3), rand(44, 3 * d, scale=0.1)
    wo = rand(45, d, d, scale=0.3)
    rms_w = rand(46, d)
    w1, w2 = rand(47, d, 2 * d, scale=0.3), rand(48, 2 * d, d, scale=0.3)
    mask = np.where(causal(t), 0.0, -np.inf).astype(np.float32)
    scale = np.array(1 / math.sqrt(hd), np.float32)
    heads_shape = np.array([t, heads, hd], np.int64)
    c = helper.make_node
    nodes = [
        c("LayerNormalization", ["x", "ln.weight", "ln.bias"], ["ln"], name="ln"),
        c("MatMul", ["ln", "qkv.weight"], ["qkv_mm"], name="qkv"),
        c("Add", ["qkv_mm", "qkv.bias"], ["qkv_out"], name="qkv_bias"),
        c("Split", ["qkv_out", "qkv_sizes"], ["q", "k", "v"], name="split", axis=-1),
        c("Reshape", ["q", "heads_shape"], ["q_r"], name="q_reshape"),
        c("Transpose", ["q_r"], ["q_h"], name="q_heads", perm=[1, 0, 2]),
        c("Reshape", ["k", "heads_shape"], ["k_r"], name="k_reshape"),
        c("Transpose", ["k_r"], ["k_t"], name="k_heads", perm=[1, 2, 0]),
        c("Reshape", ["v", "heads_shape"], ["v_r"], name="v_reshape"),
        c("Transpose", ["v_r"], ["v_h"], name="v_heads", perm=[1, 0, 2]),
        c("MatMul", ["q_h", "k_t"], ["qk"], name="qk"),
        c("Mul", ["qk", "scale"], ["scores"], name="scale"),
        c("Add", ["scores", "mask"], ["masked"], name="mask"),
        c("Softmax", ["masked"], ["probs"], name="softmax"),
        c("MatMul", ["probs", "v_h"], ["attn"], name="attn"),
        c("Transpose", ["attn"], ["attn_t"], name="merge_heads", perm=[1, 0, 2]),
        c("Reshape", ["attn_t", "merged_shape"], ["attn_m"], name="merge_reshape"),
        c("MatMul", ["attn_m", "o.weight"], ["o"], name="o_proj"),
        c("Add", ["x", "o"], ["h"], name="residual1"),
        c("Pow", ["h", "two"], ["h_sq"], name="rms_pow"),
        c("ReduceMean", ["h_sq"], ["h_ms"], name="rms_mean", axes=[-1]),
        c("Add", ["h_ms", "eps"], ["h_ms_eps"], name="rms_add"),
        c("Sqrt", ["h_ms_eps"], ["h_rms"], name="rms_sqrt"),
        c("Div", ["one", "h_rms"], ["h_inv"], name="rms_inv"),
        c("Mul", ["h", "h_inv"], ["h_norm"], name="rms_norm"),
        c("Mul", ["rms.weight", "h_norm"], ["n"], name="rms_weight"),
        c("MatMul", ["n", "fc1.weight"], ["f"], name="fc1"),
        c("Mul", ["f", "half"], ["f_half"], name="gelu_half"),
        c("Mul", ["f", "rsqrt2"], ["f_scaled"], name="gelu_scale"),
        c("Erf", ["f_scaled"], ["f_erf"], name="gelu_erf"),
        c("Add", ["one", "f_erf"], ["f_erf1"], name="gelu_add"),
        c("Mul", ["f_half", "f_erf1"], ["g"], name="gelu"),
        c("MatMul", ["g", "fc2.weight"], ["m"], name="fc2"),
        c("Add", ["h", "m"], ["y"], name="residual2"),
    ]
    inits = [
        init("ln.weight", g1), init("ln.bias", b1), init("qkv.weight", wqkv),
        init("qkv.bias", bqkv), init("qkv_sizes", np.array([d, d, d], np.int64)),
        init("heads_shape", heads_shape),
        init("merged_shape", np.array([t, d], np.int64)), init("scale", scale),
        init("mask", mask), init("o.weight", wo), init("two", np.array(2.0, np.float32)),
        init("eps", np.array(1e-6, np.float32)), init("one", np.array(1.0, np.float32)),
        init("rms.weight", rms_w), init("fc1.weight", w1), init("fc2.weight", w2),
        init("half", np.array(0.5, np.float32)),
        init("rsqrt2", np.array(0.70710678, np.float32)),
    ]
    m = model("attention_block", nodes, [tensor_info("x", F32, [t, d])],
              [tensor_info("y", F32, [t, d])], inits)
    dx = f64(x)
    ln = layernorm(dx, -1, float(np.float32(1e-5))) * f64(g1) + f64(b1)
    qkv = ln @ f64(wqkv) + f64(bqkv)
    q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
    qh = q.reshape(t, heads, hd).transpose(1, 0, 2)
    kt = k.reshape(t, heads, hd).transpose(1, 2, 0)
    vh = v.reshape(t, heads, hd).transpose(1, 0, 2)
    s = (qh @ kt) * float(scale)
    p = softmax(np.where(causal(t), s, -np.inf), -1)
    attn = (p @ vh).transpose(1, 0, 2).reshape(t, d)
    h = dx + attn @ f64(wo)
    n = h / np.sqrt((h ** 2).mean(-1, keepdims=True) + float(np.float32(1e-6))) * f64(rms_w)
    f = n @ f64(w1)
    g = 0.5 * f * (1 + erf(f / math.sqrt(2)))
    save_good("attention_block", m, {"x": x}, {"y": h + g @ f64(w2)})


# ---- A decoder layer as PyTorch exports a Granite or Llama model ----


def granite_layer(hidden=256, heads=4, kv_heads=2, head_dim=128, ffn=512,
                  tokens=8, past=0, batch=1, eps=1e-5, attention_scale=None,
                  residual=0.22, name="granite_layer", padding=0, present=True,
                  tables=None, vocab=0, embedding_multiplier=12.0):
    """One decoder layer of a Granite-shaped model in the form torch.onnx
    writes Hugging Face's eager implementation (opset 17, static shapes):

    - the weights are graph inputs named as the checkpoint names them, the
      projections given transposed, [in, out] (`...q_proj.weight.T`), as
      PyTorch's exporter writes nn.Linear (a MatMul by the transposed
      weight); `hidden_states`, `cos` and `sin` ([B, S, head_dim], the
      position embeddings of the new tokens) are inputs too;
    - RMSNorm as Pow, ReduceMean, Add, Sqrt, Div and Mul by the weight;
    - q, k, v split into heads by Reshape and Transpose; rotary embedding as
      apply_rotary_pos_emb exports: Unsqueeze of cos and sin, two Slice
      halves, Neg, Concat, Mul, Mul, Add;
    - with `past` > 0, `past_key` and `past_value` [B, KV, past, head_dim]
      joined with the new keys and values by Concat, whose results are the
      outputs `present_key` and `present_value` (the new keys and values
      themselves when there is no past);
    - repeat_kv: Unsqueeze, Expand to [B, KV, G, L, head_dim], Reshape to
      [B, H, L, head_dim];
    - scores by Transpose of the keys and MatMul, Mul by the attention scale
      (Granite's attention_multiplier; default 1/sqrt(head_dim)), Add of a
      constant causal mask [1, 1, S, L] (0, or float32's lowest value above
      the diagonal, aligned to the bottom right), Softmax, MatMul by the
      values, Transpose and Reshape back, the output projection;
    - residuals scaled by Granite's residual_multiplier (Mul), SwiGLU as
      x * Sigmoid(x) times the up projection.

    With `tables` (cos and sin of every position, [past + S, head_dim])
    the position embeddings are no inputs: Gather of the tables by the
    constant positions past .. past + S - 1, as older Hugging Face models
    export `cos_cached[position_ids]`. Without `present` the joined keys and values are no outputs (only the
    hidden states are). With `padding` > 0 the mask is no causal mask but a padding one: -1e4
    over the first `padding` keys of every query (left padding), so the
    attention is not the fused op. With `vocab` > 0 the layer starts from
    token ids, as a whole model's export does: `input_ids` (INT64 [B, S])
    gathers rows of `model.embed_tokens.weight` [vocab, hidden], scaled by
    Granite's embedding multiplier, and with `tables` the positions are an
    INT64 input too (`position_ids`), not constants.

    Returns (model, the names and shapes of its inputs)."""
    B, S, P, H, KV, hd = batch, tokens, past, heads, kv_heads, head_dim
    L, G, D, half = P + S, heads // kv_heads, hidden, head_dim // 2
    if attention_scale is None:
        attention_scale = 1 / math.sqrt(hd)
    pre = "model.layers.0."
    a = pre + "self_attn."
    m = pre + "mlp."
    c = helper.make_node
    inputs = [("input_ids", [B, S])] if vocab else [("hidden_states", [B, S, D])]
    if vocab and tables is not None:
        inputs.append(("position_ids", [B, S]))
    if tables is None:
        inputs += [("cos", [B, S, hd]), ("sin", [B, S, hd])]
    if P > 0:
        inputs += [("past_key", [B, KV, P, hd]), ("past_value", [B, KV, P, hd])]
    weights = [("model.embed_tokens.weight", [vocab, D])] if vocab else []
    weights += [(pre + "input_layernorm.weight", [D]),
               (a + "q_proj.weight.T", [D, H * hd]),
               (a + "k_proj.weight.T", [D, KV * hd]),
               (a + "v_proj.weight.T", [D, KV * hd]),
               (a + "o_proj.weight.T", [H * hd, D]),
               (pre + "post_attention_layernorm.weight", [D]),
               (m + "gate_proj.weight.T", [D, ffn]),
               (m + "up_proj.weight.T", [D, ffn]),
               (m + "down_proj.weight.T", [ffn, D])]
    nodes = []

    def rmsnorm(tag, x, w, out):
        nodes.extend([
            c("Pow", [x, "two"], [tag + ".pow"], name=tag + "/Pow"),
            c("ReduceMean", [tag + ".pow"], [tag + ".mean"], name=tag + "/ReduceMean",
              axes=[-1], keepdims=1),
            c("Add", [tag + ".mean", "eps"], [tag + ".add"], name=tag + "/Add"),
            c("Sqrt", [tag + ".add"], [tag + ".sqrt"], name=tag + "/Sqrt"),
            c("Div", [x, tag + ".sqrt"], [tag + ".div"], name=tag + "/Div"),
            c("Mul", [w, tag + ".div"], [out], name=tag + "/Mul"),
        ])

    def heads_of(tag, x, n, out):
        nodes.extend([
            c("Reshape", [x, tag + ".shape"], [tag + ".view"], name=tag + "/Reshape"),
            c("Transpose", [tag + ".view"], [out], name=tag + "/Transpose",
              perm=[0, 2, 1, 3]),
        ])
        shapes.append(init(tag + ".shape", np.array([B, S, n, hd], np.int64)))

    def rope(tag, x, out):
        nodes.extend([
            c("Mul", [x, "cos.heads"], [tag + ".cos"], name=tag + "/Mul"),
            c("Slice", [x, "zero", "half", "last"], [tag + ".x1"], name=tag + "/Slice"),
            c("Slice", [x, "half", "end", "last"], [tag + ".x2"], name=tag + "/Slice_1"),
            c("Neg", [tag + ".x2"], [tag + ".neg"], name=tag + "/Neg"),
            c("Concat", [tag + ".neg", tag + ".x1"], [tag + ".rot"], name=tag + "/Concat",
              axis=-1),
            c("Mul", [tag + ".rot", "sin.heads"], [tag + ".sin"], name=tag + "/Mul_1"),
            c("Add", [tag + ".cos", tag + ".sin"], [out], name=tag + "/Add"),
        ])

    def repeat_kv(tag, x, out):
        nodes.extend([
            c("Unsqueeze", [x, "two_axis"], [tag + ".u"], name=tag + "/Unsqueeze"),
            c("Expand", [tag + ".u", "expand_shape"], [tag + ".e"], name=tag + "/Expand"),
            c("Reshape", [tag + ".e", "repeat_shape"], [out], name=tag + "/Reshape"),
        ])

    shapes = []
    if tables is not None:
        positions = np.tile(np.arange(P, P + S, dtype=np.int64), (B, 1))
        shapes += [init("rope.cos_cached", tables[0]), init("rope.sin_cached", tables[1])]
        if not vocab:
            shapes.append(init("position_ids", positions))
        nodes += [c("Gather", ["rope.cos_cached", "position_ids"], ["cos"],
                    name="rope/Gather", axis=0),
                  c("Gather", ["rope.sin_cached", "position_ids"], ["sin"],
                    name="rope/Gather_1", axis=0)]
    if vocab:
        shapes.append(init("embedding_multiplier", np.array(embedding_multiplier, np.float32)))
        nodes += [c("Gather", ["model.embed_tokens.weight", "input_ids"], ["embeds"],
                    name="model.embed_tokens/Gather"),
                  c("Mul", ["embeds", "embedding_multiplier"], ["hidden_states"],
                    name="model/embedding_multiplier")]
    rmsnorm(pre + "input_layernorm", "hidden_states", pre + "input_layernorm.weight", "h")
    new_k = "present_key" if P == 0 else "k.rope"
    new_v = "present_value" if P == 0 else "v.heads"
    for p, n in (("q", H), ("k", KV), ("v", KV)):
        nodes.append(c("MatMul", ["h", a + p + "_proj.weight.T"], [p + ".proj"],
                       name=a + p + "_proj/MatMul"))
        heads_of(a + p + "_heads", p + ".proj", n, new_v if p == "v" else p + ".heads")
    nodes += [c("Unsqueeze", ["cos", "one_axis"], ["cos.heads"], name="rope/Unsqueeze"),
              c("Unsqueeze", ["sin", "one_axis"], ["sin.heads"], name="rope/Unsqueeze_1")]
    rope(a + "q_rope", "q.heads", "q.rope")
    rope(a + "k_rope", "k.heads", new_k)
    if P > 0:
        nodes += [c("Concat", ["past_key", new_k], ["present_key"], name=a + "cat_key", axis=2),
                  c("Concat", ["past_value", new_v], ["present_value"], name=a + "cat_value",
                    axis=2)]
    repeat_kv(a + "repeat_key", "present_key", "k.rep")
    repeat_kv(a + "repeat_value", "present_value", "v.rep")
    nodes += [
        c("Transpose", ["k.rep"], ["k.t"], name=a + "key_t", perm=[0, 1, 3, 2]),
        c("MatMul", ["q.rope", "k.t"], ["scores"], name=a + "scores"),
        c("Mul", ["scores", "scale"], ["scores.scaled"], name=a + "scale"),
        c("Add", ["scores.scaled", "mask"], ["scores.masked"], name=a + "mask"),
        c("Softmax", ["scores.masked"], ["probs"], name=a + "softmax", axis=-1),
        c("MatMul", ["probs", "v.rep"], ["context"], name=a + "context"),
        c("Transpose", ["context"], ["context.t"], name=a + "context_t", perm=[0, 2, 1, 3]),
        c("Reshape", ["context.t", "merged_shape"], ["context.m"], name=a + "merge"),
        c("MatMul", ["context.m", a + "o_proj.weight.T"], ["o"], name=a + "o_proj/MatMul"),
        c("Mul", ["o", "residual_multiplier"], ["o.scaled"], name=pre + "attn_residual/Mul"),
        c("Add", ["hidden_states", "o.scaled"], ["x1"], name=pre + "attn_residual/Add"),
    ]
    rmsnorm(pre + "post_attention_layernorm", "x1", pre + "post_attention_layernorm.weight",
            "h2")
    nodes += [
        c("MatMul", ["h2", m + "gate_proj.weight.T"], ["gate"], name=m + "gate_proj/MatMul"),
        c("Sigmoid", ["gate"], ["gate.sigmoid"], name=m + "act/Sigmoid"),
        c("Mul", ["gate", "gate.sigmoid"], ["gate.act"], name=m + "act/Mul"),
        c("MatMul", ["h2", m + "up_proj.weight.T"], ["up"], name=m + "up_proj/MatMul"),
        c("Mul", ["gate.act", "up"], ["gated"], name=m + "gated"),
        c("MatMul", ["gated", m + "down_proj.weight.T"], ["down"], name=m + "down_proj/MatMul"),
        c("Mul", ["down", "residual_multiplier"], ["down.scaled"], name=pre + "mlp_residual/Mul"),
        c("Add", ["x1", "down.scaled"], ["hidden_states_out"], name=pre + "mlp_residual/Add"),
    ]
    mask = np.zeros((S, L), np.float32)
    if padding:
        mask[:, :padding] = -1e4
    else:
        mask[np.triu(np.ones((S, L), bool), k=L - S + 1)] = np.finfo(np.float32).min
    f32 = lambda v: np.array(v, np.float32)
    i64 = lambda v: np.array(v, np.int64)
    inits = shapes + [
        init("two", f32(2.0)), init("eps", f32(eps)), init("scale", f32(attention_scale)),
        init("residual_multiplier", f32(residual)), init("mask", mask[None, None]),
        init("zero", i64([0])), init("half", i64([half])),
        init("end", i64([np.iinfo(np.int64).max])), init("last", i64([-1])),
        init("one_axis", i64([1])), init("two_axis", i64([2])),
        init("expand_shape", i64([B, KV, G, L, hd])),
        init("repeat_shape", i64([B, H, L, hd])),
        init("merged_shape", i64([B, S, H * hd])),
    ]
    all_inputs = inputs + weights
    graph_inputs = [tensor_info(n, TensorProto.INT64 if n.endswith("_ids") else F32, s)
                    for n, s in all_inputs]
    outputs = [tensor_info("hidden_states_out", F32, [B, S, D])]
    if present:
        outputs += [tensor_info("present_key", F32, [B, KV, L, hd]),
                    tensor_info("present_value", F32, [B, KV, L, hd])]
    return model(name, nodes, graph_inputs, outputs, inits), all_inputs


def granite_layer_numpy(values, heads, kv_heads, head_dim, eps, attention_scale,
                        residual, padding=0):
    """The layer of granite_layer in float64 NumPy from its input values."""
    pre = "model.layers.0."
    a, m = pre + "self_attn.", pre + "mlp."
    v = {k: f64(x) for k, x in values.items()}
    if "input_ids" in values:
        v["hidden_states"] = v["model.embed_tokens.weight"][values["input_ids"]] * \
            float(np.float32(values["embedding_multiplier"]))
    x = v["hidden_states"]
    B, S, D = x.shape
    H, KV, hd = heads, kv_heads, head_dim

    def rms(t, w):
        return w * (t / np.sqrt((t ** 2).mean(-1, keepdims=True) + float(np.float32(eps))))

    def split(t, n):
        return t.reshape(B, S, n, hd).transpose(0, 2, 1, 3)

    def rope(t):
        cos, sin = v["cos"][:, None], v["sin"][:, None]
        rot = np.concatenate([-t[..., hd // 2:], t[..., :hd // 2]], -1)
        return t * cos + rot * sin

    h = rms(x, v[pre + "input_layernorm.weight"])
    q = rope(split(h @ v[a + "q_proj.weight.T"], H))
    k = rope(split(h @ v[a + "k_proj.weight.T"], KV))
    val = split(h @ v[a + "v_proj.weight.T"], KV)
    if "past_key" in v:
        k = np.concatenate([v["past_key"], k], 2)
        val = np.concatenate([v["past_value"], val], 2)
    L = k.shape[2]
    kr, vr = np.repeat(k, H // KV, 1), np.repeat(val, H // KV, 1)
    s = q @ kr.transpose(0, 1, 3, 2) * float(np.float32(attention_scale))
    if padding:
        s[..., :padding] -= 1e4
    else:
        s = np.where(np.tril(np.ones((S, L), bool), k=L - S), s, -np.inf)
    p = softmax(s, -1)
    ctx = (p @ vr).transpose(0, 2, 1, 3).reshape(B, S, H * hd)
    r = float(np.float32(residual))
    x1 = x + (ctx @ v[a + "o_proj.weight.T"]) * r
    h2 = rms(x1, v[pre + "post_attention_layernorm.weight"])
    g = h2 @ v[m + "gate_proj.weight.T"]
    gated = g / (1 + np.exp(-g)) * (h2 @ v[m + "up_proj.weight.T"])
    return {"hidden_states_out": x1 + (gated @ v[m + "down_proj.weight.T"]) * r,
            "present_key": k, "present_value": val}


def gen_granite_layer():
    """Exported decoder layers. granite_layer and granite_layer_decode have
    the shape of examples/llm/tiny-granite.json (prefill of 8 tokens; decode
    of one token after 8) with their weights as inputs the tests draw, so
    the files are small. granite_layer_small (6 new tokens after 3, heads
    of 16, the rotary tables gathered by constant positions) and granite_layer_padded (a padding mask instead of the causal
    one; also as a decode step, one token after 7) are smaller still and
    carry inputs and NumPy's outputs."""
    for name, tokens, past in (("granite_layer", 8, 0), ("granite_layer_decode", 1, 8)):
        m, _ = granite_layer(tokens=tokens, past=past, attention_scale=0.0078125,
                             name=name)
        folder = os.path.join(OUT, name)
        os.makedirs(folder)
        onnx.save(m, os.path.join(folder, "model.onnx"))
    shape = dict(hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=96, eps=1e-5,
                 attention_scale=0.25, residual=0.5)
    for seed, (name, tokens, past, padding) in enumerate(
            (("granite_layer_small", 6, 3, 0), ("granite_layer_padded", 8, 0, 2),
             ("granite_layer_padded_decode", 1, 7, 2), ("granite_layer_ids", 6, 3, 0))):
        hd = shape["head_dim"]
        pos = np.arange(0, past + tokens, dtype=np.float64)
        freq = 10000.0 ** (-np.arange(0, hd, 2) / hd)
        angles = np.concatenate([np.outer(pos, freq)] * 2, -1)
        cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
        # granite_layer_small gathers its tables by position (constants);
        # granite_layer_ids by the positions and token ids it is given.
        ids = name == "granite_layer_ids"
        tables = (cos, sin) if name in ("granite_layer_small", "granite_layer_ids") else None
        vocab = 50 if ids else 0
        m, inputs = granite_layer(tokens=tokens, past=past, name=name, padding=padding,
                                  tables=tables, vocab=vocab, **shape)
        values = {}
        for i, (n, dims) in enumerate(inputs):
            if n in ("cos", "sin"):
                continue
            if n == "input_ids":
                values[n] = rng(700 + seed).integers(0, vocab, dims).astype(np.int64)
                continue
            if n == "position_ids":
                values[n] = np.tile(np.arange(past, past + tokens, dtype=np.int64),
                                    (dims[0], 1))
                continue
            fan_in = dims[0] if n.endswith(".T") else 1
            values[n] = rand(600 + 40 * seed + i, *dims, scale=1 / math.sqrt(fan_in))
            if n.endswith("layernorm.weight"):
                values[n] = (1 + 0.25 * values[n]).astype(np.float32)
        rope = {"cos": cos[None, past:], "sin": sin[None, past:]}
        if tables is None:
            values.update(rope)
        extra = {"embedding_multiplier": np.float32(12.0)} if ids else {}
        want = granite_layer_numpy({**values, **rope, **extra}, shape["heads"],
                                   shape["kv_heads"],
                                   hd, shape["eps"], shape["attention_scale"],
                                   shape["residual"], padding)
        save_good(name, m, values, want)


def write_granite_layer(argv):
    """--granite-layer OUT.onnx [--hidden N] ... (see usage below)."""
    import argparse
    ap = argparse.ArgumentParser(prog="gen_onnx_models.py --granite-layer")
    ap.add_argument("--granite-layer", dest="out", required=True)
    for k, d in (("hidden", 4096), ("heads", 32), ("kv-heads", 8), ("head-dim", 128),
                 ("ffn", 12800), ("tokens", 512), ("past", 0), ("batch", 1)):
        ap.add_argument("--" + k, type=int, default=d)
    ap.add_argument("--attention-scale", type=float, default=0.0078125)
    ap.add_argument("--residual", type=float, default=0.22)
    ap.add_argument("--eps", type=float, default=1e-5)
    ap.add_argument("--no-present", dest="present", action="store_false",
                    help="the joined keys and values are no outputs")
    ap.add_argument("--vocab", type=int, default=0,
                    help="start from INT64 token ids: a Gather of the embedding "
                         "table [vocab, hidden] (Granite-3.3-8B: 49159)")
    o = ap.parse_args(argv)
    m, _ = granite_layer(o.hidden, o.heads, o.kv_heads, o.head_dim, o.ffn, o.tokens,
                         o.past, o.batch, o.eps, o.attention_scale, o.residual,
                         present=o.present, vocab=o.vocab)
    onnx.save(m, o.out)
    return 0


# ---- Other opsets ----


def gen_opset11():
    """Opset 11 forms the version converter upgrades: Softmax over the
    flattened trailing axes, Unsqueeze and ReduceSum axes as attributes,
    Split sizes as an attribute, Clip bounds as inputs (host)."""
    x = rand(30, 2, 3, 4)
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], name="softmax", axis=1),
        helper.make_node("Unsqueeze", ["s"], ["u"], name="unsqueeze", axes=[0]),
        helper.make_node("Split", ["x"], ["a", "b"], name="split", axis=2, split=[1, 3]),
        helper.make_node("ReduceSum", ["b"], ["rs"], name="sum", axes=[1], keepdims=0),
        helper.make_node("Clip", ["a", "lo", "hi"], ["c"], name="clip"),
    ]
    m = model("opset11", nodes, [tensor_info("x", F32, [2, 3, 4])],
              [tensor_info("u", F32, [1, 2, 3, 4]), tensor_info("rs", F32, [2, 4 - 1]),
               tensor_info("c", F32, [2, 3, 1])],
              [init("lo", np.array(-0.5, np.float32)), init("hi", np.array(0.5, np.float32))],
              opset=11)
    d = f64(x)
    flat = softmax(d.reshape(2, 12), -1).reshape(2, 3, 4)
    save_good("opset11", m, {"x": x},
              {"u": flat[np.newaxis], "rs": d[:, :, 1:].sum(axis=1),
               "c": np.clip(d[:, :, :1], -0.5, 0.5)})


def gen_opset18():
    """Opset 18 forms read as opset 17: Reduce* axes as a constant input,
    Split by num_outputs, Pad without axes (host), a ReduceMin that
    noop_with_empty_axes makes an identity; IR version 9."""
    x = rand(31, 2, 3, 4)
    nodes = [
        helper.make_node("ReduceMean", ["x", "last"], ["m"], name="mean"),
        helper.make_node("Sub", ["x", "m"], ["c"], name="center"),
        helper.make_node("Split", ["c"], ["p0", "p1", "p2"], name="split", axis=1,
                         num_outputs=3),
        helper.make_node("Concat", ["p2", "p0"], ["cat"], name="concat", axis=1),
        helper.make_node("Constant", [], ["mid"], name="mid_axis", value_ints=[1]),
        helper.make_node("ReduceMax", ["x", "mid"], ["mx"], name="max", keepdims=0),
        helper.make_node("Pad", ["x", "pads", "fill"], ["pd"], name="pad"),
        helper.make_node("ReduceMin", ["x"], ["same"], name="noop",
                         noop_with_empty_axes=1),
    ]
    m = model("opset18", nodes, [tensor_info("x", F32, [2, 3, 4])],
              [tensor_info("cat", F32, [2, 2, 4]), tensor_info("mx", F32, [2, 4]),
               tensor_info("pd", F32, [2, 3, 6]), tensor_info("same", F32, [2, 3, 4])],
              [init("last", np.array([-1], np.int64)),
               init("pads", np.array([0, 0, 1, 0, 0, 1], np.int64)),
               init("fill", np.array(0.25, np.float32))], opset=18)
    m.ir_version = 9
    d = f64(x)
    c = d - d.mean(axis=-1, keepdims=True)
    save_good("opset18", m, {"x": x},
              {"cat": np.concatenate([c[:, 2:3], c[:, 0:1]], axis=1),
               "mx": d.max(axis=1),
               "pd": np.pad(d, ((0, 0), (0, 0), (1, 1)), constant_values=0.25),
               "same": d})


# ---- External data ----


def gen_external_data():
    """Weights in a file beside the model, in a subfolder: a MatMul weight
    and an Add bias stored externally, a small shape and a scalar inline."""
    x, w, b = rand(32, 4, 16), rand(33, 16, 32, scale=0.25), rand(34, 32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
        helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
        helper.make_node("Relu", ["hb"], ["r"], name="act"),
        helper.make_node("Mul", ["r", "half"], ["s"], name="scale"),
        helper.make_node("Reshape", ["s", "shape"], ["y"], name="reshape"),
    ]
    m = model("external_data", nodes, [tensor_info("x", F32, [4, 16])],
              [tensor_info("y", F32, [8, 16])],
              [init("w", w), init("b", b), init("half", np.array(0.5, np.float32)),
               init("shape", np.array([8, 16], np.int64))])
    folder = os.path.join(OUT, "external_data")
    os.makedirs(os.path.join(folder, "weights"))
    # Tensors of 64 bytes and more go to weights/data.bin: w and b.
    onnx.external_data_helper.convert_model_to_external_data(
        m, all_tensors_to_one_file=True, location="weights/data.bin",
        size_threshold=64)
    y = np.maximum(f64(x) @ f64(w) + f64(b), 0) * 0.5
    save_good("external_data", m, {"x": x}, {"y": y.reshape(8, 16)})


def gen_external_bad():
    """tests/data/onnx/external_bad/<case>/model.onnx: a MatMul weight
    whose external data cannot be read as located (the bad-input catalogue
    runs them)."""
    def weight_at(location):
        t = TensorProto()
        t.name, t.data_type = "w", F32
        t.dims.extend([4, 4])
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", location
        return t
    cases = {"absolute": "/etc/hostname", "escape": "../weights.bin",
             "missing": "missing.bin", "short": "short.bin"}
    for case, location in cases.items():
        folder = os.path.join(OUT, "external_bad", case)
        os.makedirs(folder)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")], case,
            [tensor_info("x", F32, [2, 4])], [tensor_info("y", F32, [2, 4])],
            [weight_at(location)])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="gen_onnx_models.py")
        onnx.save(m, os.path.join(folder, "model.onnx"))
    with open(os.path.join(OUT, "external_bad", "short", "short.bin"), "wb") as f:
        f.write(bytes(8))


# ---- Bad models ----


def gen_embedding():
    """Token and position embeddings as exporters write them: Gathers of
    table rows by INT64 ids that are model inputs (one table a weight, one a
    model input, as PyTorch exports weights), then a projection to logits
    and the greedy next token of each position (ArgMax over the last axis,
    kept and dropped). The ids are saved as int64, as NumPy saves them."""
    vocab, positions, hidden, out = 40, 16, 64, 32
    table, pos_table = rand(40, vocab, hidden), rand(41, positions, hidden)
    w = rand(42, hidden, out, scale=0.2)
    ids = rng(43).integers(0, vocab, (2, 5)).astype(np.int64)
    pos = np.tile(np.arange(5, dtype=np.int64), (2, 1)) + np.array([[0], [7]])
    I64 = TensorProto.INT64
    nodes = [
        helper.make_node("Gather", ["embed_tokens", "input_ids"], ["tok"],
                         name="embed"),
        helper.make_node("Gather", ["pos_table", "position_ids"], ["pos"],
                         name="positions", axis=0),
        helper.make_node("Add", ["tok", "pos"], ["h"], name="add"),
        helper.make_node("MatMul", ["h", "w"], ["y"], name="proj"),
        helper.make_node("ArgMax", ["y"], ["next"], name="next", axis=-1),
        helper.make_node("ArgMax", ["y"], ["next_flat"], name="next_flat", axis=2,
                         keepdims=0),
    ]
    m = model("embedding", nodes,
              [tensor_info("input_ids", I64, [2, 5]),
               tensor_info("position_ids", I64, [2, 5]),
               tensor_info("pos_table", F32, [positions, hidden])],
              [tensor_info("y", F32, [2, 5, out]), tensor_info("next", I64, [2, 5, 1]),
               tensor_info("next_flat", I64, [2, 5])],
              [init("embed_tokens", table), init("w", w)])
    y = (f64(table)[ids] + f64(pos_table)[pos]) @ f64(w)
    save_good("embedding", m,
              {"input_ids": ids, "position_ids": pos, "pos_table": pos_table},
              {"y": y, "next": y.argmax(-1)[..., None], "next_flat": y.argmax(-1)})


def gen_bad():
    os.makedirs(os.path.join(OUT, "bad"))
    relu = model("relu", [helper.make_node("Relu", ["x"], ["y"], name="act")],
                 [tensor_info("x", F32, [2, 3])], [tensor_info("y", F32, [2, 3])])
    good = relu.SerializeToString()
    save_bad("empty", b"")
    save_bad("truncated", good[: len(good) // 2])
    save_bad("random", rng(99).integers(0, 256, 64, dtype=np.uint8).tobytes())

    # The checker rejects an attribute Relu does not have.
    bad_attr = onnx.ModelProto()
    bad_attr.CopyFrom(relu)
    bad_attr.graph.node[0].attribute.append(helper.make_attribute("alpha", 0.5))
    save_bad("checker", bad_attr)

    save_bad("dynamic_dim", model(
        "dyn", [helper.make_node("Relu", ["x"], ["y"], name="act")],
        [tensor_info("x", F32, ["batch", 3])], [tensor_info("y", F32, ["batch", 3])]))
    # Ids from a model input gather rows of a rank-2 table only.
    save_bad("gather_rank3_table", model(
        "g3", [helper.make_node("Gather", ["t", "ids"], ["y"], name="gather")],
        [tensor_info("ids", TensorProto.INT64, [2])],
        [tensor_info("y", F32, [2, 3, 4])],
        [init("t", rand(44, 5, 3, 4))]))
    # An integer model input read as anything but a Gather's indices.
    save_bad("int_input_also_added", model(
        "ia", [helper.make_node("Gather", ["t", "ids"], ["g"], name="gather"),
               helper.make_node("Cast", ["ids"], ["f"], name="cast", to=F32),
               helper.make_node("Add", ["f", "f"], ["y"], name="add")],
        [tensor_info("ids", TensorProto.INT64, [2])],
        [tensor_info("g", F32, [2, 4]), tensor_info("y", F32, [2])],
        [init("t", rand(45, 5, 4))]))
    save_bad("unsupported_op", model(
        "hs", [helper.make_node("Relu", ["x"], ["r"], name="act"),
               helper.make_node("HardSwish", ["r"], ["y"], name="hswish")],
        [tensor_info("x", F32, [2, 3])], [tensor_info("y", F32, [2, 3])]))
    save_bad("wrong_opset", model(
        "old", [helper.make_node("Relu", ["x"], ["y"], name="act")],
        [tensor_info("x", F32, [2, 3])], [tensor_info("y", F32, [2, 3])], opset=6))
    # Opsets after 17: an op whose semantics changed, one opset 17 lacks,
    # and a form the rewrite to opset 17 cannot take.
    save_bad("opset_changed_op", model(
        "resize", [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize")],
        [tensor_info("x", F32, [1, 1, 2, 2])], [tensor_info("y", F32, [1, 1, 4, 4])],
        [init("scales", np.array([1, 1, 2, 2], np.float32))], opset=18))
    save_bad("opset_new_op", model(
        "gelu", [helper.make_node("Gelu", ["x"], ["y"], name="gelu")],
        [tensor_info("x", F32, [2, 3])], [tensor_info("y", F32, [2, 3])], opset=20))
    save_bad("opset_uneven_split", model(
        "split", [helper.make_node("Split", ["x"], ["a", "b"], name="split", axis=0,
                                   num_outputs=2)],
        [tensor_info("x", F32, [5])], [tensor_info("a", F32, [3]), tensor_info("b", F32, [2])],
        opset=18))
    save_bad("opset_computed_axes", model(
        "axes", [helper.make_node("ReduceMean", ["x", "a"], ["y"], name="mean")],
        [tensor_info("x", F32, [2, 3]), tensor_info("a", TensorProto.INT64, [1])],
        [tensor_info("y", F32, [2, 1])], opset=18))
    save_bad("shape_mismatch", model(
        "mismatch", [helper.make_node("Add", ["x", "y"], ["z"], name="add")],
        [tensor_info("x", F32, [2, 3]), tensor_info("y", F32, [4])],
        [tensor_info("z", F32, [2, 3])]))
    save_bad("int_input", model(
        "ints", [helper.make_node("Add", ["x", "x"], ["y"], name="add")],
        [tensor_info("x", TensorProto.INT32, [3])],
        [tensor_info("y", TensorProto.INT32, [3])]))
    save_bad("pow_input_exponent", model(
        "powy", [helper.make_node("Pow", ["x", "e"], ["y"], name="pow")],
        [tensor_info("x", F32, [3]), tensor_info("e", F32, [])],
        [tensor_info("y", F32, [3])]))
    save_bad("double_input", model(
        "f64", [helper.make_node("Add", ["x", "c"], ["y"], name="add")],
        [tensor_info("x", TensorProto.DOUBLE, [3])],
        [tensor_info("y", TensorProto.DOUBLE, [3])],
        [init("c", np.ones(3, np.float64))]))

    # Shape arithmetic past 64 bits: the host library must refuse it, not
    # wrap it into a small shape.
    i64 = lambda name, v: init(name, np.array(v, np.int64))
    save_bad("tile_overflow", model(
        "tile", [helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
        [tensor_info("x", F32, [4, 64])], [tensor_info("y", F32, ["rows", "cols"])],
        [i64("r", [2**62 + 1, 1])]))
    save_bad("pad_overflow", model(
        "pad", [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
        [tensor_info("x", F32, [4, 64])], [tensor_info("y", F32, ["rows", "cols"])],
        [i64("p", [0, 2**63 - 1, 0, 1])]))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--granite-layer":
        return write_granite_layer(sys.argv[1:])
    if len(sys.argv) != 1:
        print(__doc__)
        return 2
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for gen in (gen_matmul, gen_gemm, gen_elementwise, gen_unary, gen_softmax,
                gen_layernorm, gen_reduce, gen_shapes, gen_where, gen_float16,
                gen_dynamic_batch, gen_gelu_erf, gen_rmsnorm, gen_causal_mask, gen_embedding,
                gen_attention_block, gen_granite_layer, gen_opset11, gen_opset18, gen_external_data,
                gen_external_bad, gen_bad):
        gen()
    return 0


if __name__ == "__main__":
    sys.exit(main())
