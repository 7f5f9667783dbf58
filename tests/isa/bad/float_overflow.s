; expect: float_overflow.s:4:20: error: operand 'imm' of 'muls' is out of range: 1e39 is not representable as FP32
.core 0
.engine sfu.0
    muls 0x0, 0x1, 1e39
    halt
