; expect: op_outside_stream.s:3:1: error: '.op' outside a stream (open one with .core and .engine)
.core 0
.op "x"
.engine ring
    halt
