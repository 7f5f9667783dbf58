.program "pt_matmul"

.tensor input A dl16 [16, 128] @ 0x0
.tensor input B dl16 [128, 64] @ 0x20
.tensor output C fp32 [16, 64] @ 0xa0

.core 0
.engine dma.load
.op "matmul"
    ld      0x0, 0x0, run=32
    ld      0x20, 0x20, run=128
    signal  c0, 1
    halt

.engine dma.store
.op "matmul"
    wait    c1, 1
    st      0xa0, 0xa0, run=32
    halt

.engine pt.0
.op "matmul"
    wait    c0, 1
    mm      0xa0, 0x0, 0x20, m=16, k=128, n=64
    signal  c1, 1
    halt
