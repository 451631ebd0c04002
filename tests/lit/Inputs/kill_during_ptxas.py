"""Stops tilec with a signal while its ptxas runs, then says what is left.

    kill_during_ptxas.py SCRATCH SIGNAL TILEC ARG...

The ptxas is a stand-in (TILE_PTXAS_PATH) that records its process id and
arguments in SCRATCH and sleeps.  Once it is running, tilec gets SIGNAL
(TERM or INT).  Prints how tilec ended, whether the stand-in outlived it, and
any file or folder from ptxas's arguments still on disk.
"""
import os
import signal
import subprocess
import sys
import time


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def left_behind(args):
    """Paths ptxas was given (and their folders) that still exist; /dev/fd/N are the caller's memory files."""
    paths = [a for a in args if a.startswith("/") and not a.startswith(("/dev/", "/proc/"))]
    return sorted({p for a in paths for p in (a, os.path.dirname(a)) if os.path.exists(p) and p != "/tmp"})


def main():
    scratch, signame, tilec, *rest = sys.argv[1:]
    os.makedirs(scratch, exist_ok=True)
    fake = os.path.join(scratch, "ptxas")
    pid_file = os.path.join(scratch, "ptxas.pid")
    with open(fake, "w") as f:
        f.write(f'#!/bin/sh\nprintf "%s\\n" "$@" > {scratch}/ptxas.args\necho $$ > {pid_file}.tmp\n'
                f"mv {pid_file}.tmp {pid_file}\nexec sleep 600\n")
    os.chmod(fake, 0o755)
    env = dict(os.environ, TILE_PTXAS_PATH=fake)
    tilec_proc = subprocess.Popen([tilec] + rest, env=env, stderr=subprocess.DEVNULL,
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if not wait_for(lambda: os.path.exists(pid_file), 120):
        tilec_proc.kill()
        sys.exit("ptxas never started")
    ptxas_pid = int(open(pid_file).read())
    tilec_proc.send_signal(getattr(signal, "SIG" + signame))
    rc = tilec_proc.wait()
    print("tilec:", f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}")
    gone = wait_for(lambda: not running(ptxas_pid), 10)
    print("ptxas:", "gone" if gone else "still running")
    if not gone:
        os.kill(ptxas_pid, signal.SIGKILL)
    args = open(os.path.join(scratch, "ptxas.args")).read().split("\n")
    print("left behind:", " ".join(left_behind(args)) or "nothing")


main()
