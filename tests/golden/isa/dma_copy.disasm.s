.program "dma_copy"

.tensor input x dl16 [3, 100] @ 0x0
.tensor output y dl16 [3, 100] @ 0x10

.core 0
.engine dma.load
.op "copy_x"
    li      r1, 256
    li      r2, 0
    loop    6, L0
    ld      [r1], [r2]
    signal  c0, 1
    addi    r1, r1, 1
    addi    r2, r2, 1
L0:
    halt

.engine dma.store
.op "copy_x"
    li      r1, 256
    li      r2, 16
    loop    6, L0
    wait    c0, 1
    st      [r2], [r1]
    addi    r1, r1, 1
    addi    r2, r2, 1
L0:
    halt
