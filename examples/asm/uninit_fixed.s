; uninit_fixed: uninit.s loading both sticks of x. Runs clean.

.program "uninit_fixed"

.tensor input  x dl16 [1, 128] @ 0x0
.tensor output y dl16 [1, 128] @ 0x2

.core 0
.engine dma.load
.op "load_x"
    ld      0x0, 0x0, run=2
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
