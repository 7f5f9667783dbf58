; expect: counter_out_of_range.s:4:12: error: operand 'counter' of 'signal' is out of range: c32 (valid: c0..c31, limits.sync_counters_per_core = 32)
.core 0
.engine ring
    signal c32, 1
    halt
