# lit configuration for tile's golden tests: every .tl file under tests/
# (seeds/, errors/, lit/) carries its own RUN and CHECK lines.
import os
import sys

import lit.formats

config.name = "tile"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tl", ".tir", ".tgir"]
config.excludes = ["unit", "fuzz", "Inputs"]  # Inputs: files tests read, not tests
config.test_source_root = os.path.dirname(__file__)
# scratch files (%t) go to the build tree, never next to the sources
config.test_exec_root = lit_config.params.get("exec_root", os.path.join(config.test_source_root, "Output"))

tilec = lit_config.params.get("tilec", "tilec")
filecheck = lit_config.params.get("filecheck", "FileCheck")
not_tool = lit_config.params.get("not", "not")
config.substitutions.append(("%tilec", tilec))
config.substitutions.append(("FileCheck", filecheck))
config.substitutions.append(("not ", not_tool + " "))
# llvm-as (beside `not`, in LLVM's bin folder) makes bitcode files at test time
config.substitutions.append(("%llvm-as", os.path.join(os.path.dirname(not_tool), "llvm-as")))
config.substitutions.append(("%python", sys.executable))
# %memlimit: a shell prefix capping a command's memory (4 GiB), for tests of inputs that once made the
# compiler's memory explode; nothing under the sanitizers, whose shadow memory a cap forbids
sanitized = lit_config.params.get("sanitize", "0") in ("1", "ON", "TRUE", "true")
config.substitutions.append(("%memlimit", "" if sanitized else "ulimit -v 4000000 &&"))
# ptxas checks the PTX the backend emits; tests that need it say "REQUIRES: ptxas"
ptxas = lit_config.params.get("ptxas", "")
if ptxas and os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
