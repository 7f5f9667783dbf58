; Copies two [2, 64] DL16 inputs to two outputs through LX: a -> y, b -> z.
; Each tensor is one stick block of 2 rows: 2 sticks.

.program "copy2"

.tensor input  a dl16 [2, 64] @ 0x0
.tensor input  b dl16 [2, 64] @ 0x2
.tensor output y dl16 [2, 64] @ 0x4
.tensor output z dl16 [2, 64] @ 0x6

.core 0
.engine dma.load
.op "copy"
    ld      0x0, 0x0, run=4      ; a and b into LX sticks 0..3
    signal  c0, 1
    halt

.engine dma.store
.op "copy"
    wait    c0, 1
    st      0x4, 0x0, run=4      ; LX sticks 0..3 to y and z
    halt
