; expect: loop_too_deep.s:8:5: error: loops nested 5 deep; limits.max_loop_depth = 4
.core 0
.engine pt.0
    loop 2, a
    loop 2, b
    loop 2, c
    loop 2, d
    loop 2, e
    nop
e: nop
d: nop
c: nop
b: nop
a: halt
