; expect: bad_register.s:5:14: error: no register 'r16' (r0..r15)
.core 0
.engine ring
    li r1, 0
    addi r2, r16, 1
    halt
