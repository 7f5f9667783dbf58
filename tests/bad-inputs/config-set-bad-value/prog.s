; dma_copy: copies a [3, 100] DL16 tensor from x to y through LX, one stick
; at a time. The load engine signals counter c0 after each stick lands in LX;
; the store engine waits for it before writing that stick back out, so the
; two engines overlap while every store reads a stick that is already loaded.
;
; x and y are [3, 100] DL16: 100 elements need two 64-lane stick blocks, so
; the device layout is [2, 3, 64] = 6 sticks each (block-major, padding zero).

.program "dma_copy"

.tensor input  x dl16 [3, 100] @ 0x0
.tensor output y dl16 [3, 100] @ 0x10

.core 0
.engine dma.load
.op "copy_x"
    li      r1, 0x100        ; LX buffer
    li      r2, 0x0          ; x
    loop    6, load_done
    ld      [r1], [r2]
    signal  c0, 1            ; stick r1 is in LX
    addi    r1, r1, 1
    addi    r2, r2, 1
load_done:
    halt

.engine dma.store
.op "copy_x"
    li      r1, 0x100        ; LX buffer
    li      r2, 0x10         ; y
    loop    6, store_done
    wait    c0, 1            ; one signal per loaded stick
    st      [r2], [r1]
    addi    r1, r1, 1
    addi    r2, r2, 1
store_done:
    halt
