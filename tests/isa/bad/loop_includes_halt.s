; expect: loop_includes_halt.s:4:13: error: loop body includes the stream's final 'halt'; put label 'end' before it
.core 0
.engine ring
    loop 3, end
    nop
    halt
end:
