; expect: wrong_engine.s:4:5: error: 'mm' cannot run on dma.load (it runs on pt)
.core 0
.engine dma.load
    mm 0x0, 0x10, 0x20, m=1, k=64, n=64
    halt
