"""Writes the stacks of one pid's CPU pushes as folded stacks.

Usage: agent_folded.py RECEIVED PID FOLDED [--skip N] [--count N]
                       [--after N] [--process NAME]...

RECEIVED is tests/pyroscope_receiver.py's folder, whose pushes are numbered
as they came; those numbered N or less (--after) are left out. Of the CPU
pushes (not the runtime events' profiles) holding samples of PID (as one of
the --process names, when given), the first --skip are passed over and the
--count (default 2) after them written to FOLDED. Exits 1, writing
nothing, until there are that many."""
import argparse
import glob
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protobuf_wire import pprof_samples  # noqa: E402


def number_of(path):
    return int(os.path.basename(path).split(".")[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("received")
    parser.add_argument("pid")
    parser.add_argument("folded")
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--count", type=int, default=2)
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--process", action="append")
    arguments = parser.parse_args()
    pushes = []
    for path in sorted(glob.glob(f"{arguments.received}/*.pb.gz"), key=number_of):
        if number_of(path) <= arguments.after:
            continue
        with open(path[:-len(".pb.gz")] + ".query") as query:
            if "label.__name__=process_cpu\n" not in query.read():
                continue
        try:
            with open(path, "rb") as profile:
                pushed = pprof_samples(profile.read())
        except (OSError, EOFError, ValueError, zlib.error):
            continue  # still being written
        samples = [(values[0], names) for labels, values, names in pushed
                   if labels.get("pid") == arguments.pid and
                   (not arguments.process or labels.get("process") in arguments.process)]
        if samples:
            pushes.append(samples)
    wanted = arguments.skip + arguments.count
    if len(pushes) < wanted:
        sys.exit(1)
    with open(arguments.folded, "w") as out:
        for samples in pushes[arguments.skip:wanted]:
            for weight, names in samples:
                out.write(f"{';'.join(reversed(names))} {weight}\n")


main()
