; expect: loop_label_before_loop.s:6:13: error: loop end label 'top' must come after the loop
.core 0
.engine ring
top:
    nop
    loop 3, top
    halt
