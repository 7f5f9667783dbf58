; expect: unknown_directive.s:2:1: error: unknown directive '.section' (expected .program, .tensor, .host, .core, .engine or .op)
.section text
.core 0
.engine ring
    halt
