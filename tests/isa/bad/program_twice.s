; expect: program_twice.s:3:1: error: '.program' given twice (first on line 2)
.program "a"
.program "b"
