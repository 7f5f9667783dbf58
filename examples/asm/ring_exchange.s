; ring_exchange: cores 0 and 1 swap a [4, 64] DL16 tile over the data ring.
;
; Each core loads its own tile (a0 or a1) into LX 0x0, sends it to the other
; core and receives the other's tile into LX 0x10, then stores what it
; received (core 0 writes b0 = a1, core 1 writes b1 = a0). A send and its
; recv pair up in program order and transfer once both are issued, so core 0
; sends first and core 1 receives first. A barrier at the end lets neither
; ring stream finish before the exchange is complete on both cores.

.program "ring_exchange"

.tensor input  a0 dl16 [4, 64] @ 0x0
.tensor input  a1 dl16 [4, 64] @ 0x4
.tensor output b0 dl16 [4, 64] @ 0x8
.tensor output b1 dl16 [4, 64] @ 0xc

.core 0
.engine dma.load
.op "load"
    ld      0x0, 0x0, run=4        ; a0 -> LX 0x0
    signal  c0, 1
    halt

.engine dma.store
.op "store"
    wait    c1, 1
    st      0x8, 0x10, run=4       ; LX 0x10 -> b0
    halt

.engine ring
.op "exchange"
    wait    c0, 1                  ; own tile is in LX
    send    1, 0x0, n=4
    recv    1, 0x10, n=4
    signal  c1, 1                  ; the other tile has arrived
    barrier 0, 2
    halt

.core 1
.engine dma.load
.op "load"
    ld      0x0, 0x4, run=4        ; a1 -> LX 0x0
    signal  c0, 1
    halt

.engine dma.store
.op "store"
    wait    c1, 1
    st      0xc, 0x10, run=4       ; LX 0x10 -> b1
    halt

.engine ring
.op "exchange"
    wait    c0, 1
    recv    0, 0x10, n=4
    send    0, 0x0, n=4
    signal  c1, 1
    barrier 0, 2
    halt
