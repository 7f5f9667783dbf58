; expect: const_value_count.s:2:1: error: constant 'w' has 3 values; its shape [2, 2] needs 4
.tensor const w fp32 [2, 2] @ 0x0 = [1, 2, 3]
