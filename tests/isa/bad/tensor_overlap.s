; expect: tensor_overlap.s:3:33: error: tensor 'b' at sticks [0x4, 0x8) overlaps tensor 'a' at [0x0, 0x6) (line 2)
.tensor input a dl16 [3, 100] @ 0x0
.tensor output b fp32 [4, 32] @ 0x4
