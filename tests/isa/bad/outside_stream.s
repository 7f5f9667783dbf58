; expect: outside_stream.s:3:5: error: instruction 'li' outside a stream (open one with .core and .engine)
.core 0
    li r1, 0
.engine ring
    halt
