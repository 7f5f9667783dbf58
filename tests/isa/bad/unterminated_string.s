; expect: unterminated_string.s:2:10: error: unterminated string
.program "oops
