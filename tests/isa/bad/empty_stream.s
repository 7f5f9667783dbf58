; expect: empty_stream.s:3:1: error: stream core 3 ring is empty; it must end with 'halt'
.core 3
.engine ring
.engine sfu.1
    halt
