; expect: unknown_keyword.s:4:18: error: 'ld' has no operand 'len' (syntax: ld lx, mem [run=1, n1=1, lxs1=0, ms1=0, n2=1, lxs2=0, ms2=0])
.core 0
.engine dma.load
    ld 0x0, 0x0, len=4
    halt
