; expect: core_out_of_range.s:2:7: error: core 32 is out of range (valid: 0..31, chip.cores = 32)
.core 32
.engine ring
    halt
