; expect: lx_offset_beyond_lx.s:4:8: error: operand 'lx' of 'ld' is out of range: offset 0x4000 (valid: |offset| < 0x4000, the LX size in sticks)
.core 0
.engine dma.load
    ld [r1+0x4000], 0x0
    halt
