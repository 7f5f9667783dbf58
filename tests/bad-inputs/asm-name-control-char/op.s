.program "copy"
.tensor input  a dl16 [2, 64] @ 0x0
.core 0
.engine dma.load
.op "co\tpy"
    ld      0x0, 0x0, run=2
    halt
