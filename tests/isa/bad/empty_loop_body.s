; expect: empty_loop_body.s:4:13: error: loop body is empty: label 'next' directly follows the loop
.core 0
.engine ring
    loop 3, next
next:
    halt
