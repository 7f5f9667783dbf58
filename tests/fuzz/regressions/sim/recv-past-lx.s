; A receive reaching past the end of LX: an out-of-bounds finding, no data moved.
.core 0
.engine ring
    send    1, 0x0, n=4
    halt

.core 1
.engine ring
    recv    0, 0x3ffe, n=4
    halt
