; oob: a load whose LX destination runs past the end of LX (2 MiB = 0x4000
; sticks with the default config): sticks 0x3ffe..0x4001 of a 4-stick run.
; The simulator reports out-of-bounds with the range and does not perform the
; access. oob_fixed.s loads into LX that exists.

.program "oob"

.tensor input  x dl16 [4, 64] @ 0x0

.core 0
.engine dma.load
.op "load_x"
    li      r1, 0x3ffe
    ld      [r1], 0x0, run=4
    halt
