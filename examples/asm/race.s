; race: the SFU reads a stick that the load engine writes, with nothing
; ordering the two. The simulator reports an lx-race on sticks [0x0, 0x1):
; whichever finishes first, the result depends on timing, not on the program.
; race_fixed.s is the same program with the missing signal/wait.

.program "race"

.tensor input  x dl16 [1, 64] @ 0x0
.tensor output y dl16 [1, 64] @ 0x1

.core 0
.engine dma.load
.op "load_x"
    ld      0x0, 0x0
    halt

.engine sfu.0
.op "relu"
    relu    0x10, 0x0        ; reads x before anything says it has arrived
    signal  c1, 1
    halt

.engine dma.store
.op "store_y"
    wait    c1, 1
    st      0x1, 0x10
    halt
