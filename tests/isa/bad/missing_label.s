; expect: missing_label.s:4:13: error: undefined label 'done'
.core 0
.engine ring
    loop 4, done
    nop
end:
    halt
