; expect: missing_halt.s:5:5: error: stream core 0 dma.store does not end with 'halt'
.core 0
.engine dma.store
    nop
    nop
.engine dma.load
    halt
