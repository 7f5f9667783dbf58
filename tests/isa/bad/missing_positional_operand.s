; expect: missing_positional_operand.s:4:5: error: 'addi' is missing operand 'imm' (syntax: addi rd, rs, imm)
.core 0
.engine ring
    addi r1, r2
    halt
