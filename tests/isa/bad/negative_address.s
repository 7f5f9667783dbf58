; expect: negative_address.s:4:8: error: operand 'lx' of 'ld' is a negative address: -0x1
.core 0
.engine dma.load
    ld -1, 0x0
    halt
