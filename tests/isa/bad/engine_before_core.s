; expect: engine_before_core.s:2:1: error: '.engine' needs a '.core' first
.engine ring
    halt
