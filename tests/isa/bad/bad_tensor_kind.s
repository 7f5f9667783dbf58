; expect: bad_tensor_kind.s:2:9: error: unknown tensor kind 'weight' (expected input, output, const or scratch)
.tensor weight w dl16 [4] @ 0x0
