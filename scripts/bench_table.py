#!/usr/bin/env python3
"""Turns bench_compiler's JSON output into the Markdown table of
docs/compiler-quality.md.

    build/bench/bench_compiler --benchmark_out=q.json --benchmark_out_format=json
    python3 scripts/bench_table.py q.json
"""
import json
import sys


def case_name(name):
    name = name.split("/iterations")[0]
    kind, _, args = name.partition("/")
    if kind == "BM_Matmul":
        m, k, n = args.split("/")
        return f"matmul {m}x{k}x{n}"
    if kind == "BM_BatchedMatmul":
        return f"batched [8,512,4096]x[4096,{args}]"
    if kind == "BM_Softmax":
        return "softmax [8192,4096]"
    if kind == "BM_LayerNorm":
        return "layernorm [8192,4096]"
    if kind == "BM_AblationBatchedMatmul":
        b, n = args.split("/")
        return f"batched [{b},512,4096]x[4096,{n}]"
    if kind == "BM_AblationSoftmaxOneCore":
        return f"softmax [512,{args}], 1 core"
    return name


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench_table.py BENCH.json")
    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = []
    ablations = []
    compile_ms = None
    for b in data["benchmarks"]:
        if b["name"].startswith("BM_CompileEncoderLayer"):
            compile_ms = b["real_time"] if b.get("time_unit") == "ms" else None
            continue
        if "naive_cycles" in b:
            ablations.append(
                "| {} | {:,.0f} | {:,.0f} | {:.2f}x | {:.0f}% |".format(
                    case_name(b["name"]), b["naive_cycles"], b["ours_cycles"],
                    b["naive_cycles"] / b["ours_cycles"], b["gain_pct"]))
            continue
        if "o2_cycles" not in b:
            continue
        regime = "compute" if b["compute_bound"] >= 0.5 else "memory"
        rows.append(
            "| {} | {} | {:,.0f} | {:,.0f} | {:,.0f} | {:.1f}% | {:.2f}x | {:.0f} | {:.0f} |".format(
                case_name(b["name"]), regime, b["bound_cycles"], b["o0_cycles"],
                b["o2_cycles"], b["o2_pct_of_bound"], b["speedup"],
                b["o2_cores"], b["o2_program_kb"]))
    print("| case | bound | bound cycles | -O0 cycles | -O2 cycles | -O2 of bound | -O2 speedup | -O2 cores | -O2 program KB |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if ablations:
        print("\n| ablation | naive cycles | ours cycles | ratio | gain |")
        print("|---|---|---|---|---|")
        print("\n".join(ablations))
    if compile_ms is not None:
        print(f"\nCompile time of a BERT-base encoder layer at -O2: {compile_ms:.0f} ms.")


if __name__ == "__main__":
    main()
