; sfu_softmax: softmax of one row of 100 DL16 values, computed in FP32.
;
; x is [1, 100] DL16: two 64-lane sticks, the last 28 lanes padding (zero).
; Converted to FP32 the row is four 32-lane sticks. Every SFU op gets
; count=100 so the 28 padding lanes are ignored by the reductions and written
; as zero (exp(0) = 1 would otherwise leak into the sum). The per-row max and
; sum are written to every lane of one stick, and s2=stick pairs that stick
; with each of the row's sticks.
;
; LX map (sticks): 0x0 x (dl16, 2) | 0x10 x (f32, 4) | 0x20 max (1)
;                  0x30 x - max (4) | 0x40 exp (4) | 0x50 sum (1)
;                  0x51 1/sum (1) | 0x60 softmax (f32, 4) | 0x70 y (dl16, 2)

.program "sfu_softmax"

.tensor input  x dl16 [1, 100] @ 0x0
.tensor output y dl16 [1, 100] @ 0x2

.core 0
.engine dma.load
.op "softmax"
    ld      0x0, 0x0, run=2
    signal  c0, 1
    halt

.engine dma.store
.op "softmax"
    wait    c1, 1
    st      0x2, 0x70, run=2
    halt

.engine sfu.0
.op "softmax"
    wait    c0, 1
    cvt     0x10, 0x0, to=f32, n=2, count=100
    rmax    0x20, 0x10, n=4, count=100, fmt=f32
    sub     0x30, 0x10, 0x20, n=4, s2=stick, count=100, fmt=f32
    exp     0x40, 0x30, n=4, count=100, fmt=f32
    rsum    0x50, 0x40, n=4, count=100, fmt=f32
    recip   0x51, 0x50, fmt=f32
    mul     0x60, 0x40, 0x51, n=4, s2=stick, count=100, fmt=f32
    cvt     0x70, 0x60, to=dl16, n=4, count=100
    signal  c1, 1
    halt
