"""The pushes of one pid, as tests/agent_lifecycle.sh's `pushes` lists them
("ROUND CONNECTION PID PROCESS QUERY_FILE" a line, one for each process in
a push: a series holds every process of its workload): imported by its
checks."""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protobuf_wire import pprof_samples  # noqa: E402


def frames_of(profile_path, pid, process):
    """The function names of `pid`'s samples as `process` in a pushed
    profile, joined into bytes (what the checks look for names in)."""
    with open(profile_path, "rb") as profile:
        samples = pprof_samples(profile.read())
    return "\n".join(name for labels, _, names in samples
                     if labels.get("pid") == pid and labels.get("process") == process
                     for name in names).encode()


def rounds_of(pushes, pid):
    """{round: {process: [frames, ...]}} of `pid`'s pushes: one entry per
    push that holds samples of the pid as that process."""
    rounds = collections.defaultdict(lambda: collections.defaultdict(list))
    for number, _, pushed_pid, process, path in (line.split() for line in open(pushes)):
        if pushed_pid == pid:
            rounds[number][process].append(frames_of(path[:-len(".query")] + ".pb.gz",
                                                     pid, process))
    return rounds


def profile_counts(rounds):
    """How many profiles each process has in each round, to print."""
    return [{process: len(profiles) for process, profiles in pushed.items()}
            for pushed in rounds.values()]
