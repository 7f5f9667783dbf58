; expect: unexpected_character.s:4:15: error: unexpected character '#'
.core 0
.engine ring
    li r1, 5  # five
    halt
