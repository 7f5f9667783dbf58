#!/usr/bin/python3
"""Exports PyTorch modules to ONNX, with fixed inputs and PyTorch's outputs.

For each model this writes one folder:

    <out>/<name>/model.onnx              opset 17, static shapes, constants folded
    <out>/<name>/<input>.npy             the inputs (float32, from a fixed seed)
    <out>/<name>/expected_<output>.npy   PyTorch's outputs on them (float32)
    <out>/<name>/README.md               one line: what the model is

The models are the PyTorch examples of examples/models (see its README.md):
a Linear-GELU-Linear MLP, a BERT-style encoder layer, a GPT-style decoder
block and a LLaMA-style block, written with the plain torch ops a reader
knows (nn.Linear, F.softmax, masked_fill, F.gelu, F.silu, torch.rsqrt).
Weights and inputs come from torch.manual_seed, PyTorch runs on one thread
with deterministic algorithms, so every run writes the same files.

It needs PyTorch (Debian's python3-torch) and runs with Debian's python3:

    /usr/bin/python3 scripts/export_torch.py            # every model
    /usr/bin/python3 scripts/export_torch.py gpt_decoder --out /tmp/models
    /usr/bin/python3 scripts/export_torch.py --list

`export_module` exports any module the same way, for use from other scripts.
"""

import argparse
import math
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_OUT = os.path.join(ROOT, "examples", "models")
OPSET = 17

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:
    sys.stderr.write(
        "export_torch.py: cannot import '%s': this Python does not have it.\n"
        "Install Debian's packages (as root: apt-get install python3-torch "
        "python3-onnx, or scripts/install-deps.sh --with-torch) and run the "
        "script with /usr/bin/python3, which sees them.\n" % e.name)
    sys.exit(1)


# ---- Export ----


def export_module(module, inputs, folder, description, output_names, graph_name):
    """Exports `module` (evaluated in eval mode) to folder/model.onnx, its
    graph named `graph_name`, and saves `inputs` (name -> float32 tensor, in
    forward() order), the module's outputs (named by `output_names`) and a
    README.md holding `description` beside it. Returns the outputs as NumPy
    arrays."""
    # Same bits on every run: one thread (the reduction order of a parallel
    # matmul depends on the thread count) and deterministic kernels.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    module = module.eval()
    names = list(inputs)
    args = tuple(inputs[n] for n in names)
    with torch.no_grad():
        outputs = module(*args)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    if len(outputs) != len(output_names):
        raise ValueError("%d outputs, %d names" % (len(outputs), len(output_names)))

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    # No dynamic_axes: every dimension stays static, as the importer needs.
    torch.onnx.export(
        module, args, path,
        opset_version=OPSET, do_constant_folding=True,
        input_names=names, output_names=list(output_names),
        export_params=True, keep_initializers_as_inputs=False)
    # The exporter names every graph "torch_jit"; the graph's name is the
    # name the compiler's tools print.
    model = onnx.load(path)
    model.graph.name = graph_name
    onnx.checker.check_model(model)
    onnx.save(model, path)
    for n, t in inputs.items():
        np.save(os.path.join(folder, n + ".npy"), t.numpy().astype(np.float32))
    results = []
    for n, t in zip(output_names, outputs):
        a = t.numpy().astype(np.float32)
        np.save(os.path.join(folder, "expected_" + n + ".npy"), a)
        results.append(a)
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(description.strip() + "\n")
    return results


# ---- Building blocks ----


class SelfAttention(nn.Module):
    """Multi-head self-attention written out: separate or fused Q/K/V
    projections, heads by view + transpose, scores scaled by 1/sqrt(d),
    softmax, the heads merged back and projected."""

    def __init__(self, hidden, heads, fused_qkv, bias, causal, seq):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.fused_qkv = fused_qkv
        if fused_qkv:
            self.qkv = nn.Linear(hidden, 3 * hidden, bias=bias)
        else:
            self.q = nn.Linear(hidden, hidden, bias=bias)
            self.k = nn.Linear(hidden, hidden, bias=bias)
            self.v = nn.Linear(hidden, hidden, bias=bias)
        self.o = nn.Linear(hidden, hidden, bias=bias)
        self.causal = causal
        if causal == "tril":
            # GPT-2's spelling: a lower-triangular buffer, masked_fill -inf.
            self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))
        elif causal == "additive":
            # LLaMA's spelling: an additive mask, -inf above the diagonal.
            self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1))

    def split_heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s, c = x.shape
        if self.fused_qkv:
            q, k, v = self.qkv(x).split(c, dim=2)
        else:
            q, k, v = self.q(x), self.k(x), self.v(x)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal == "tril":
            scores = scores.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
        elif self.causal == "additive":
            scores = scores + self.mask[:s, :s]
        probs = F.softmax(scores, dim=-1)
        y = (probs @ v).transpose(1, 2).contiguous().view(b, s, c)
        return self.o(y)


class RMSNorm(nn.Module):
    """LLaMA's RMSNorm: x * rsqrt(mean(x^2) + eps), times a weight."""

    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


# ---- The models ----


class TorchMlp(nn.Module):
    def __init__(self, hidden=64, ffn=256):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class BertEncoderLayer(nn.Module):
    """Post-LN: LayerNorm(x + attention(x)), then LayerNorm(h + FFN(h))."""

    def __init__(self, hidden=64, heads=2, ffn=256, seq=32):
        super().__init__()
        self.attention = SelfAttention(hidden, heads, fused_qkv=False, bias=True,
                                       causal=None, seq=seq)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x):
        h = self.attention_norm(x + self.attention(x))
        return self.output_norm(h + self.output(F.gelu(self.intermediate(h))))


class GptDecoderBlock(nn.Module):
    """Pre-LN: x + attention(LayerNorm(x)), then h + MLP(LayerNorm(h)); a
    fused QKV projection, causal attention, GPT-2's tanh GELU."""

    def __init__(self, hidden=64, heads=4, ffn=256, seq=32):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = SelfAttention(hidden, heads, fused_qkv=True, bias=True,
                                  causal="tril", seq=seq)
        self.ln_2 = nn.LayerNorm(hidden)
        self.c_fc = nn.Linear(hidden, ffn)
        self.c_proj = nn.Linear(ffn, hidden)

    def forward(self, x):
        h = x + self.attn(self.ln_1(x))
        return h + self.c_proj(F.gelu(self.c_fc(self.ln_2(h)), approximate="tanh"))


class LlamaBlock(nn.Module):
    """Pre-RMSNorm: x + attention(RMSNorm(x)), then h + FFN(RMSNorm(h)) with
    the SiLU-gated FFN down(silu(gate(x)) * up(x)); no biases, causal
    attention with an additive mask, no rotary embedding."""

    def __init__(self, hidden=64, heads=4, ffn=256, seq=32):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = SelfAttention(hidden, heads, fused_qkv=False, bias=False,
                                       causal="additive", seq=seq)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.gate_proj = nn.Linear(hidden, ffn, bias=False)
        self.up_proj = nn.Linear(hidden, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        h = x + self.self_attn(self.input_layernorm(x))
        n = self.post_attention_layernorm(h)
        return h + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))


def perturb_norms(module, generator):
    """Norm weights start at 1 and biases at 0, which would hide a weight
    applied to the wrong axis: draw them around those values instead."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.LayerNorm, RMSNorm)):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=generator))
            if isinstance(m, nn.LayerNorm):
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=generator))


# name -> (seed, constructor, input shape, description)
MODELS = {
    "torch_mlp": (
        1, TorchMlp, (1, 16, 64),
        "torch_mlp: Linear(64, 256) - GELU (erf) - Linear(256, 64) on x[1, 16, 64]."),
    "bert_encoder": (
        2, BertEncoderLayer, (1, 32, 64),
        "bert_encoder: a BERT-style post-LN encoder layer on x[1, 32, 64]: 2-head "
        "self-attention without mask (separate Q, K, V projections), "
        "LayerNorm(x + attention), a GELU (erf) FFN 64 -> 256 -> 64, LayerNorm(h + FFN)."),
    "gpt_decoder": (
        3, GptDecoderBlock, (1, 32, 64),
        "gpt_decoder: a GPT-2-style pre-LN decoder block on x[1, 32, 64]: LayerNorm, "
        "4-head causal self-attention (fused QKV, tril buffer + masked_fill -inf), "
        "residual, LayerNorm, a tanh-GELU MLP 64 -> 256 -> 64, residual."),
    "llama_block": (
        4, LlamaBlock, (1, 32, 64),
        "llama_block: a LLaMA-style block on x[1, 32, 64] (no rotary embedding): "
        "RMSNorm, 4-head causal self-attention (additive -inf mask, no biases), "
        "residual, RMSNorm, a SiLU-gated FFN down(silu(gate(x)) * up(x)) with "
        "64 -> 256 -> 64, residual."),
}


def export_model(name, out):
    seed, make, shape, description = MODELS[name]
    torch.manual_seed(seed)
    module = make()
    generator = torch.Generator().manual_seed(seed + 100)
    perturb_norms(module, generator)
    x = torch.randn(shape, generator=generator)
    folder = os.path.join(out, name)
    readme = (description + "\n\nGenerated by `/usr/bin/python3 scripts/export_torch.py "
              "%s` (see ../README.md).") % name
    export_module(module, {"x": x}, folder, readme, ["y"], name)
    return folder


def main():
    parser = argparse.ArgumentParser(
        description="Export the PyTorch example models to ONNX with their "
                    "inputs and PyTorch's outputs.")
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help="models to export (default: all; see --list)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="folder to write the model folders in (default: examples/models)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    args = parser.parse_args()
    if args.list:
        for name, (_, _, _, description) in MODELS.items():
            print(description)
        return 0
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error("unknown model '%s' (known: %s)" % (unknown[0], ", ".join(MODELS)))

    for name in args.models or list(MODELS):
        folder = export_model(name, args.out)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print("%s: %s (%d KB)" % (name, folder, size // 1024))
    return 0


if __name__ == "__main__":
    sys.exit(main())
