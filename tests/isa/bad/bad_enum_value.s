; expect: bad_enum_value.s:4:28: error: operand 'fmt' of 'add' must be one of dl16|f32, got 'fp32'
.core 0
.engine sfu.0
    add 0x0, 0x1, 0x2, fmt=fp32
    halt
