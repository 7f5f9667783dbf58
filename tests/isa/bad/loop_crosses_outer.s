; expect: loop_crosses_outer.s:5:13: error: loop body ends after the end of the enclosing loop on line 4
.core 0
.engine sfu.0
    loop 2, outer
    loop 3, inner
    nop
outer:
    nop
inner:
    nop
    halt
