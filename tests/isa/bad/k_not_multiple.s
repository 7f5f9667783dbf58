; expect: k_not_multiple.s:4:32: error: operand 'k' of 'mm' is out of range: 100 (valid: 64..65472, multiple of 64)
.core 0
.engine pt.0
    mm 0x0, 0x10, 0x20, m=4, k=100, n=64
    halt
