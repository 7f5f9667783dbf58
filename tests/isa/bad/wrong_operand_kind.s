; expect: wrong_operand_kind.s:4:8: error: operand 'rd' of 'li' must be a register (r0..r15), got '5'
.core 0
.engine dma.load
    li 5, r1
    halt
