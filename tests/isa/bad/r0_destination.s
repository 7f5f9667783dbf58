; expect: r0_destination.s:4:10: error: r0 cannot be a destination (it always reads 0): operand 'rd' of 'addi'
.core 0
.engine ring
    addi r0, r1, 1
    halt
