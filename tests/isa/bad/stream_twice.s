; expect: stream_twice.s:7:9: error: stream core 1 sfu.0 defined twice (first on line 3)
.core 1
.engine sfu.0
    halt
.core 0
.core 1
.engine sfu.0
    halt
