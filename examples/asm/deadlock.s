; deadlock: the store engine waits for counter c1, but the SFU signals c2.
; Every unfinished stream waits for something that never comes; the simulator
; names each waiter and what it waits for instead of hanging.
; deadlock_fixed.s signals the counter that is waited for.

.program "deadlock"

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
    signal  c2, 1            ; wrong counter: the store waits on c1
    halt

.engine dma.store
.op "store_y"
    wait    c1, 1
    st      0x1, 0x10
    halt
