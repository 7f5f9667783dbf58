; expect: duplicate_label.s:6:1: error: duplicate label 'top' (first defined on line 4)
.core 0
.engine ring
top:
    nop
top:
    halt
