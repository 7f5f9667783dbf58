; expect: label_outside_stream.s:2:1: error: label 'start' outside a stream
start:
.core 0
.engine ring
    halt
