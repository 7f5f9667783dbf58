; expect: int8_value_out_of_range.s:2:38: error: '200' is not an int8 value (-128..127)
.tensor const q int8 [2] @ 0x0 = [1, 200]
