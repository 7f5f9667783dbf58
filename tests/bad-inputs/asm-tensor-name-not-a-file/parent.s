; An output tensor whose name is not a plain file name: `spyre sim --outputs`
; would write its data outside the folder it is given.
.program "bad_name"

.tensor output ".." dl16 [2, 64] @ 0x0

.core 0
.engine dma.load
    halt
