; expect: positional_as_keyword.s:4:8: error: operand 'rd' of 'li' is positional; write it without 'name=' (syntax: li rd, imm)
.core 0
.engine ring
    li rd=r1, 5
    halt
