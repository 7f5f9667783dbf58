; expect: operand_out_of_range.s:4:22: error: operand 'run' of 'ld' is out of range: 70000 (valid: 1..65535)
.core 0
.engine dma.load
    ld 0x0, 0x0, run=70000
    halt
