#!/usr/bin/env python3
# Writes the .npy inputs of the `spyre sim` end-to-end tests
# (tests/sim/cli/SimCliTest.cpp). Run from anywhere; the files land next to
# this script. Values come from closed formulas, not a random generator, so
# the files are the same with any NumPy version. The tests themselves read
# the committed files and do not need Python.
#
# Most values are k/64 with |k| <= 256: nine significant bits at most, so
# they are exact in DL16 (ten significant bits), float16 and float32, and a
# copy through the device must return them unchanged. The matmul operands are
# arbitrary float32 values, so the test's tolerance covers DL16 input
# rounding.
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(rel, array):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, array)


def sixty_fourths(shape, a, b, span=257):
    """k/64 with k = (a*i + b*j) mod span - span//2, row-major over shape."""
    idx = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    rows = idx // shape[-1]
    cols = idx % shape[-1]
    k = (a * rows + b * cols) % span - span // 2
    return k.astype(np.float64) / 64.0


# dma_copy: x [3, 100] in float32 and, as the float16 case, in float16.
x = sixty_fourths((3, 100), 37, 11)
save("dma_copy/x.npy", x.astype(np.float32))
save("dma_copy_f16/x.npy", x.astype(np.float16))

# pt_matmul: A [16, 128], B [128, 64], arbitrary float32 values in (-1, 1).
i = np.arange(16 * 128, dtype=np.float64).reshape(16, 128)
save("pt_matmul/A.npy", np.sin(0.37 * i + 0.5).astype(np.float32))
j = np.arange(128 * 64, dtype=np.float64).reshape(128, 64)
save("pt_matmul/B.npy", np.cos(0.113 * j + 0.25).astype(np.float32))

# sfu_softmax: x [1, 100] in [-4, 4] (k/32, |k| <= 128).
save("sfu_softmax/x.npy", sixty_fourths((1, 100), 0, 29, span=257).astype(np.float32) * 2)

# ring_exchange: two distinct [4, 64] tiles.
save("ring_exchange/a0.npy", sixty_fourths((4, 64), 13, 5).astype(np.float32))
save("ring_exchange/a1.npy", sixty_fourths((4, 64), 7, 19).astype(np.float32) + 8)

# The relu programs (race/deadlock/uninit and their fixed twins) and oob.
save("relu_1x64/x.npy", sixty_fourths((1, 64), 0, 23).astype(np.float32))
save("relu_1x128/x.npy", sixty_fourths((1, 128), 0, 23).astype(np.float32))
save("oob/x.npy", sixty_fourths((4, 64), 3, 17).astype(np.float32))

# Bad inputs for dma_copy's x [3, 100] dl16: a wrong shape and a wrong dtype.
save("bad/x_3x99_f32.npy", sixty_fourths((3, 99), 37, 11).astype(np.float32))
save("bad/x_int32.npy", np.arange(300, dtype=np.int32).reshape(3, 100))
