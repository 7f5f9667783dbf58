; expect: tensor_beyond_memory.s:2:34: error: tensor 'big' at sticks [0x3fffffff, 0x40000005) lies beyond device memory (0x40000000 sticks, memory.size_bytes = 137438953472)
.tensor input big dl16 [6, 64] @ 0x3fffffff
