; pt_matmul: C[16 x 64] = A[16 x 128] * B[128 x 64] on one corelet's PT.
;
; Layouts follow the matmul stick rule: A is sticked on K, B and C on N.
;   A dl16 [16, 128] -> device [2, 16, 64]  = 32 sticks: block j's row i at j*16 + i
;   B dl16 [128, 64] -> device [1, 128, 64] = 128 sticks: row r at r
;   C fp32 [16, 64]  -> device [2, 16, 32]  = 32 sticks: block j's row i at j*16 + i
; These are exactly mm's default operand layouts (as = m, bs = k, cs = m), so
; each tensor moves between memory and LX as one contiguous run.

.program "pt_matmul"

.tensor input  A dl16 [16, 128] @ 0x0
.tensor input  B dl16 [128, 64] @ 0x20
.tensor output C fp32 [16, 64]  @ 0xa0

.core 0
.engine dma.load
.op "matmul"
    ld      0x0, 0x0, run=32       ; A -> LX 0x0
    ld      0x20, 0x20, run=128    ; B -> LX 0x20
    signal  c0, 1                  ; both operands are in LX
    halt

.engine dma.store
.op "matmul"
    wait    c1, 1                  ; C is complete
    st      0xa0, 0xa0, run=32     ; LX 0xa0 -> C
    halt

.engine pt.0
.op "matmul"
    wait    c0, 1
    mm      0xa0, 0x0, 0x20, m=16, k=128, n=64
    signal  c1, 1
    halt
