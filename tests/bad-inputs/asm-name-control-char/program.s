.program "co\npy"
.tensor input  a dl16 [2, 64] @ 0x0
.core 0
.engine dma.load
    ld      0x0, 0x0, run=2
    halt
