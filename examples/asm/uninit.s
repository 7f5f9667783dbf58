; uninit: the SFU reads two sticks of LX but only one was loaded; stick 0x1
; was never written. The simulator reports an lx-uninitialized-read on
; [0x1, 0x2). uninit_fixed.s loads both sticks.

.program "uninit"

.tensor input  x dl16 [1, 128] @ 0x0
.tensor output y dl16 [1, 128] @ 0x2

.core 0
.engine dma.load
.op "load_x"
    ld      0x0, 0x0             ; only the first of x's two sticks
    signal  c0, 1
    halt

.engine sfu.0
.op "relu"
    wait    c0, 1
    relu    0x10, 0x0, n=2
    signal  c1, 1
    halt

.engine dma.store
.op "store_y"
    wait    c1, 1
    st      0x2, 0x10, run=2
    halt
