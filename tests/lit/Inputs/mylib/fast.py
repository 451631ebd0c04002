# One helper defined two ways, by an environment variable read on import:
# tile takes the last definition (the default one).
import os

import triton
import triton.language as tl

if os.environ.get("MYLIB_FAST", "0") == "1":
    @triton.jit
    def exp(x):
        return tl.math.exp2(x * 1.4426950408889634)
else:
    @triton.jit
    def exp(x):
        return tl.exp(x.to(tl.float32))
