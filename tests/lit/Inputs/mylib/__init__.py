# A kernel library's package for lit/run_package_imports.tl: helpers its
# kernels import from other modules, as Triton libraries split them.
from mylib.utils import ext
