; expect: bad_float.s:4:20: error: operand 'imm' of 'muls' must be an FP32 number, got 'half'
.core 0
.engine sfu.0
    muls 0x0, 0x1, half
    halt
