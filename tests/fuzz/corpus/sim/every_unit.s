; Fuzz seed: two cores using every engine, nested loops, registers, the
; reduce ring, a barrier and most SFU forms, so mutations start deep.
.program "every_unit"

.tensor input   x dl16 [8, 64] @ 0x0
.tensor const   w fp32 [2, 2]  @ 0x10 = [1.0, -2.5, 0.5, 3.0]
.tensor scratch t fp32 [8, 32] @ 0x20
.tensor output  y dl16 [8, 64] @ 0x40

.core 0
.engine dma.load
    li      r1, 0x0
    loop    2, outer
    loop    4, inner
    ld      [r1], [r1]
    addi    r1, r1, 1
inner:
    nop
outer:
    ld      0x20, 0x10, run=2, n1=1
    signal  c0, 1
    signal  c2, 1, core=1
    halt

.engine pt.0
    wait    c0, 1
    mm      0x100, 0x0, 0x0, m=8, k=64, n=64, out=f32
    mmi8    0x200, 0x0, 0x0, m=8, k=128, n=128
    signal  c1, 1
    halt

.engine sfu.1
    wait    c1, 1
    cvt     0x300, 0x0, to=f32, n=2, m=8
    adds    0x310, 0x300, 1.5, n=2, fmt=f32
    muls    0x320, 0x310, -0.25, n=2, fmt=f32
    maxs    0x330, 0x320, 0.0, n=2, fmt=f32
    pows    0x340, 0x330, 2.0, n=2, fmt=f32
    bcast   0x350, 0x340, 3, n=2, fmt=f32
    gelut   0x360, 0x350, n=2, fmt=f32
    erf     0x370, 0x360, n=2, fmt=f32
    div     0x380, 0x370, 0x340, n=2, fmt=f32
    min     0x390, 0x380, 0x370, n=2, fmt=f32
    csum    0x3a0, 0x390, n=2, m=2, fmt=f32
    cmax    0x3b0, 0x390, n=2, m=2, fmt=f32
    rsum    0x3c0, 0x390, n=2, fmt=f32
    signal  c3, 1
    halt

.engine ring
    wait    c3, 1
    rsend   1, 0x3c0, n=1
    barrier 0, 4
    halt

.engine dma.store
    barrier 0, 4
    halt

.core 1
.engine ring
    wait    c2, 1
    racc    0, 0x10, n=1
    signal  c4, 1
    barrier 0, 4
    halt

.engine dma.store
    wait    c4, 1
    st      0x40, 0x10, run=1
    barrier 0, 4
    halt
