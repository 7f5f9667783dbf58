.program "ring_exchange"

.tensor input a0 dl16 [4, 64] @ 0x0
.tensor input a1 dl16 [4, 64] @ 0x4
.tensor output b0 dl16 [4, 64] @ 0x8
.tensor output b1 dl16 [4, 64] @ 0xc

.core 0
.engine dma.load
.op "load"
    ld      0x0, 0x0, run=4
    signal  c0, 1
    halt

.engine dma.store
.op "store"
    wait    c1, 1
    st      0x8, 0x10, run=4
    halt

.engine ring
.op "exchange"
    wait    c0, 1
    send    1, 0x0, n=4
    recv    1, 0x10, n=4
    signal  c1, 1
    barrier 0, 2
    halt

.core 1
.engine dma.load
.op "load"
    ld      0x0, 0x4, run=4
    signal  c0, 1
    halt

.engine dma.store
.op "store"
    wait    c1, 1
    st      0xc, 0x10, run=4
    halt

.engine ring
.op "exchange"
    wait    c0, 1
    recv    0, 0x10, n=4
    send    0, 0x0, n=4
    signal  c1, 1
    barrier 0, 2
    halt
