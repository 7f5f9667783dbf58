; expect: no_such_corelet.s:3:9: error: no engine 'pt.2' (valid: pt.0..pt.1, chip.corelets_per_core = 2)
.core 0
.engine pt.2
    halt
