; expect: loop_count_zero.s:4:10: error: operand 'count' of 'loop' is out of range: 0 (valid: 1..65535)
.core 0
.engine ring
    loop 0, end
    nop
end:
    halt
