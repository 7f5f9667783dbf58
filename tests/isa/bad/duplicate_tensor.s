; expect: duplicate_tensor.s:3:16: error: tensor 'x' declared twice (first on line 2)
.tensor input x dl16 [4] @ 0x0
.tensor output x dl16 [4] @ 0x8
