; expect: send_core_out_of_range.s:4:10: error: operand 'core' of 'send' is out of range: 32 (valid: 0..31, chip.cores = 32)
.core 0
.engine ring
    send 32, 0x0
    halt
