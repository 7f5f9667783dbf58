; expect: bad_dtype.s:2:17: error: unknown dtype 'fp16' (expected dl16, fp32, int8 or int32)
.tensor input x fp16 [4] @ 0x0
