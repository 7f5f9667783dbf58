; deadlock_fixed: deadlock.s with the SFU signalling c1, the counter the
; store engine waits for. Runs clean.

.program "deadlock_fixed"

.tensor input  x dl16 [1, 64] @ 0x0
.tensor output y dl16 [1, 64] @ 0x1

.core 0
.engine dma.load
.op "load_x"
    ld      0x0, 0x0
    signal  c0, 1
    halt

.engine sfu.0
.op "relu"
    wait    c0, 1
    relu    0x10, 0x0
    signal  c1, 1
    halt

.engine dma.store
.op "store_y"
    wait    c1, 1
    st      0x1, 0x10
    halt
