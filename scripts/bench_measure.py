"""What the scripts/bench-* measure of one command, in Python: imported by
their measurements (bench-lib.sh puts scripts/ on PYTHONPATH)."""
import os
import subprocess
import sys


def measure(command, stdout=subprocess.DEVNULL):
    """CPU seconds (user + system) and peak RSS (MiB) of one command and the
    children it waited for. Exit status 124 (timeout) and 130 (SIGINT) are
    how a sampling run is stopped; any other failure ends the benchmark."""
    child = subprocess.Popen(command, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 124, 130):
        sys.exit(f"failed ({status}): {' '.join(command)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
