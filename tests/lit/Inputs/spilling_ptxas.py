"""A stand-in for ptxas (TILE_PTXAS_PATH) whose report depends on the PTX:

    spilling_ptxas.py LOG USED SPILLS CAPPED_USED CAPPED_SPILLS -arch=... -v -o CUBIN PTX

Without a .maxnreg in the PTX it reports USED registers and SPILLS bytes of
spill stores, with one CAPPED_USED and CAPPED_SPILLS; it appends the PTX's
.maxnreg line (or "none") to LOG, and writes a cubin naming the run."""
import re
import sys

log, used, spills, capped_used, capped_spills = sys.argv[1:6]
out, ptx = sys.argv[-2], sys.argv[-1]
text = open(ptx).read()
cap = re.search(r"^\.maxnreg \d+$", text, re.M)
with open(log, "a") as f:
    f.write((cap.group(0) if cap else "none") + "\n")
if cap:
    used, spills = capped_used, capped_spills
with open(out, "wb") as f:
    f.write(b"cubin " + (cap.group(0).encode() if cap else b"uncapped"))
print("ptxas info    : Compiling entry function 'k' for 'sm_90a'")
print("    0 bytes stack frame, %s bytes spill stores, %s bytes spill loads" % (spills, spills))
print("ptxas info    : Used %s registers, used 1 barriers" % used)
