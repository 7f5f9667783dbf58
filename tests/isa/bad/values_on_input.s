; expect: values_on_input.s:2:32: error: only const tensors take values; 'x' is input
.tensor input x fp32 [2] @ 0x0 = [1, 2]
