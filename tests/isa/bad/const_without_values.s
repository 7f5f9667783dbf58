; expect: const_without_values.s:2:1: error: constant 'w' needs values (= [...])
.tensor const w dl16 [4] @ 0x0
