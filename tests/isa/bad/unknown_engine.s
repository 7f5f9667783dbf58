; expect: unknown_engine.s:3:9: error: unknown engine 'dma' (expected dma.load, dma.store, pt.N, sfu.N or ring)
.core 0
.engine dma
    halt
