; expect: dl16_value_overflow.s:2:38: error: '1e10' is beyond the DL16 range (largest 8573157376)
.tensor const h dl16 [3] @ 0x0 = [1, 1e10, inf]
