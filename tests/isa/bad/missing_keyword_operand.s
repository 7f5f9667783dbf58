; expect: missing_keyword_operand.s:4:5: error: 'mm' is missing operand 'k=' (syntax: mm c, a, b, m=, k=, n= [as=m, bs=k, cs=m, out=f32, acc=0])
.core 0
.engine pt.1
    mm 0x0, 0x10, 0x20, m=4, n=64
    halt
