; expect: keyword_twice.s:4:25: error: operand 'run' given twice
.core 0
.engine dma.load
    ld 0x0, 0x0, run=4, run=5
    halt
