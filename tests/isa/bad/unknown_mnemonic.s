; expect: unknown_mnemonic.s:4:5: error: unknown instruction 'mov'
.core 0
.engine dma.load
    mov r1, r2
    halt
