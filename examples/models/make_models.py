#!/usr/bin/python3
"""Regenerates the example models in this folder: graph JSON files with their
weights as .npy files beside them, drawn from a fixed seed, and for the GPT
block a NumPy (float64) reference of its output.

Run from anywhere: /usr/bin/python3 examples/models/make_models.py
The outputs are committed; the tests only read them.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def dump(value, indent=0, used=0, width=100):
    """JSON that stays readable: what fits on its line stays on one line."""
    flat = json.dumps(value, separators=(", ", ": "))
    if used + len(flat) <= width or not isinstance(value, (dict, list)):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = json.dumps(k) + ": "
            items.append(pad + key + dump(v, indent + 2, indent + 2 + len(key), width))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dump(v, indent + 2, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


class Model:
    def __init__(self, name, folder, seed):
        self.name = name
        self.folder = os.path.join(HERE, folder)
        self.rng = np.random.default_rng(seed)
        self.inputs, self.outputs, self.constants, self.ops = [], [], [], []
        os.makedirs(self.folder, exist_ok=True)

    def input(self, name, shape):
        self.inputs.append({"name": name, "dtype": "f32", "shape": list(shape)})

    def weight(self, name, shape, scale=0.05, offset=0.0):
        data = (offset + scale * self.rng.standard_normal(shape)).astype(np.float32)
        file = name + ".npy"
        np.save(os.path.join(self.folder, file), data)
        self.constants.append({"name": name, "dtype": "f32", "shape": list(shape), "file": file})
        return data

    def scalar(self, name, value):
        self.constants.append({"name": name, "dtype": "f32", "shape": [], "data": [value]})
        return np.float32(value)

    def op(self, name, kind, inputs, outputs, **attrs):
        op = {"name": name, "op": kind, "inputs": inputs, "outputs": outputs}
        if attrs:
            op["attrs"] = attrs
        self.ops.append(op)

    def save(self):
        doc = {"format": "spyre-graph", "version": 1, "name": self.name,
               "inputs": self.inputs, "outputs": self.outputs,
               "constants": self.constants, "ops": self.ops}
        with open(os.path.join(self.folder, "model.json"), "w") as f:
            f.write(dump(doc) + "\n")


def layernorm(x, w, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mlp_block():
    m = Model("mlp_block", "mlp_block", seed=1)
    m.input("x", [7, 64])
    m.weight("fc1.weight", [128, 64])
    m.weight("fc1.bias", [128], scale=0.02)
    m.weight("fc2.weight", [64, 128])
    m.weight("fc2.bias", [64], scale=0.02)
    m.op("fc1", "linear", ["x", "fc1.weight", "fc1.bias"], ["h"])
    m.op("act", "gelu", ["h"], ["g"], approximate="none")
    m.op("fc2", "linear", ["g", "fc2.weight", "fc2.bias"], ["y"])
    m.outputs = ["y"]
    m.save()


def norm_softmax_block():
    m = Model("norm_softmax", "norm_softmax", seed=2)
    m.input("x", [7, 100])
    m.weight("ln.weight", [100], scale=0.1, offset=1.0)
    m.weight("ln.bias", [100], scale=0.1)
    m.scalar("temperature", 0.5)
    m.op("ln", "layernorm", ["x", "ln.weight", "ln.bias"], ["n"], axis=-1, epsilon=1e-5)
    m.op("scale", "mul", ["n", "temperature"], ["s"])
    m.op("sm", "softmax", ["s"], ["p"], axis=-1)
    m.outputs = ["p"]
    m.save()


def decoder_ops(m, seq, hidden, heads, linear):
    """The ops of a GPT-style pre-LN decoder block on x[seq, hidden]:
    `linear(name, x, out)` adds a projection with the weights `name.weight`
    and `name.bias`."""
    head = hidden // heads
    m.op("ln1", "layernorm", ["x", "ln1.weight", "ln1.bias"], ["ln1.out"], epsilon=1e-5)
    linear("attn.qkv", "ln1.out", "qkv")
    m.op("attn.split", "split", ["qkv"], ["q", "k", "v"], axis=1, sizes=[hidden] * 3)
    for t in "qkv":
        m.op(f"attn.{t}.heads", "reshape", [t], [f"{t}.heads"], shape=[seq, heads, head])
        m.op(f"attn.{t}.perm", "transpose", [f"{t}.heads"], [f"{t}h"], perm=[1, 0, 2])
    m.op("attn.scores", "matmul", ["qh", "kh"], ["scores"], transpose_b=True)
    m.op("attn.scale", "mul", ["scores", "attn.scale"], ["scaled"])
    m.op("attn.mask", "causal_mask_add", ["scaled"], ["masked"])
    m.op("attn.softmax", "softmax", ["masked"], ["probs"], axis=-1)
    m.op("attn.context", "matmul", ["probs", "vh"], ["ctx.heads"])
    m.op("attn.merge.perm", "transpose", ["ctx.heads"], ["ctx.seq"], perm=[1, 0, 2])
    m.op("attn.merge", "reshape", ["ctx.seq"], ["ctx"], shape=[seq, hidden])
    linear("attn.proj", "ctx", "attn.out")
    m.op("residual1", "add", ["x", "attn.out"], ["h"])
    m.op("ln2", "layernorm", ["h", "ln2.weight", "ln2.bias"], ["ln2.out"], epsilon=1e-5)
    linear("mlp.fc", "ln2.out", "mlp.h")
    m.op("mlp.act", "gelu", ["mlp.h"], ["mlp.g"], approximate="tanh")
    linear("mlp.proj", "mlp.g", "mlp.out")
    m.op("residual2", "add", ["h", "mlp.out"], ["out"])
    m.outputs = ["out"]


def gpt_block():
    seq, hidden, heads = 16, 64, 4
    head = hidden // heads
    m = Model("gpt_block", "gpt_block", seed=3)
    m.input("x", [seq, hidden])
    w = {}
    w["ln1.weight"] = m.weight("ln1.weight", [hidden], scale=0.1, offset=1.0)
    w["ln1.bias"] = m.weight("ln1.bias", [hidden], scale=0.1)
    w["attn.qkv.weight"] = m.weight("attn.qkv.weight", [3 * hidden, hidden], scale=0.125)
    w["attn.qkv.bias"] = m.weight("attn.qkv.bias", [3 * hidden], scale=0.02)
    w["attn.proj.weight"] = m.weight("attn.proj.weight", [hidden, hidden], scale=0.125)
    w["attn.proj.bias"] = m.weight("attn.proj.bias", [hidden], scale=0.02)
    w["ln2.weight"] = m.weight("ln2.weight", [hidden], scale=0.1, offset=1.0)
    w["ln2.bias"] = m.weight("ln2.bias", [hidden], scale=0.1)
    w["mlp.fc.weight"] = m.weight("mlp.fc.weight", [4 * hidden, hidden], scale=0.125)
    w["mlp.fc.bias"] = m.weight("mlp.fc.bias", [4 * hidden], scale=0.02)
    w["mlp.proj.weight"] = m.weight("mlp.proj.weight", [hidden, 4 * hidden], scale=0.0625)
    w["mlp.proj.bias"] = m.weight("mlp.proj.bias", [hidden], scale=0.02)
    scale = m.scalar("attn.scale", 1.0 / np.sqrt(head))

    def linear(name, x, out):
        m.op(name, "linear", [x, f"{name}.weight", f"{name}.bias"], [out])

    decoder_ops(m, seq, hidden, heads, linear)
    m.save()

    # The same block in NumPy, float64 throughout, from the float32 weights.
    x = np.random.default_rng(4).uniform(-1, 1, [seq, hidden]).astype(np.float32)
    f = {k: v.astype(np.float64) for k, v in w.items()}
    xd = x.astype(np.float64)
    a = layernorm(xd, f["ln1.weight"], f["ln1.bias"])
    qkv = a @ f["attn.qkv.weight"].T + f["attn.qkv.bias"]
    q, k, v = np.split(qkv, 3, axis=1)
    q, k, v = (t.reshape(seq, heads, head).transpose(1, 0, 2) for t in (q, k, v))
    s = (q @ k.transpose(0, 2, 1)) * np.float64(scale)
    s = s + np.triu(np.full((seq, seq), -np.inf), k=1)
    ctx = (softmax(s) @ v).transpose(1, 0, 2).reshape(seq, hidden)
    h = xd + ctx @ f["attn.proj.weight"].T + f["attn.proj.bias"]
    b = layernorm(h, f["ln2.weight"], f["ln2.bias"])
    g = gelu_tanh(b @ f["mlp.fc.weight"].T + f["mlp.fc.bias"])
    out = h + g @ f["mlp.proj.weight"].T + f["mlp.proj.bias"]
    ref = os.path.join(m.folder, "reference")
    os.makedirs(ref, exist_ok=True)
    np.save(os.path.join(ref, "x.npy"), x)
    np.save(os.path.join(ref, "out.npy"), out.astype(np.float32))


def gpt2_layer():
    """A GPT-2-small decoder layer (hidden 768, 12 heads of 64, S = 256) for
    timing studies such as examples/sweeps: its weights are model inputs, so
    the folder holds only the graph and `spyre run --seed N --timing-only`
    runs it. The weights are [in, out] (x @ W + b), the layout the device
    reads them in, as a deployed model's constants are stored."""
    seq, hidden, heads = 256, 768, 12
    head = hidden // heads
    m = Model("gpt2_layer", "gpt2_layer", seed=5)
    m.input("x", [seq, hidden])
    for name, shape in [("ln1.weight", [hidden]), ("ln1.bias", [hidden]),
                        ("attn.qkv.weight", [hidden, 3 * hidden]),
                        ("attn.qkv.bias", [3 * hidden]),
                        ("attn.proj.weight", [hidden, hidden]),
                        ("attn.proj.bias", [hidden]),
                        ("ln2.weight", [hidden]), ("ln2.bias", [hidden]),
                        ("mlp.fc.weight", [hidden, 4 * hidden]),
                        ("mlp.fc.bias", [4 * hidden]),
                        ("mlp.proj.weight", [4 * hidden, hidden]),
                        ("mlp.proj.bias", [hidden])]:
        m.input(name, shape)
    m.scalar("attn.scale", 1.0 / np.sqrt(head))

    def linear(name, x, out):
        m.op(name, "matmul", [x, f"{name}.weight"], [f"{out}.mm"])
        m.op(f"{name}.bias", "add", [f"{out}.mm", f"{name}.bias"], [out])

    decoder_ops(m, seq, hidden, heads, linear)
    m.save()


if __name__ == "__main__":
    mlp_block()
    norm_softmax_block()
    gpt_block()
    gpt2_layer()
