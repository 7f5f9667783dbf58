; oob_fixed: oob.s loading to the last four sticks that exist. Runs clean.

.program "oob_fixed"

.tensor input  x dl16 [4, 64] @ 0x0

.core 0
.engine dma.load
.op "loaÿ_x"
    li      r1, 0x3ffc
    ld      [r1], 0x0, run=4
    halt
