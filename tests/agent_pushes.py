"""The pushes of one pid, as tests/agent_lifecycle.sh's `pushes` lists them
("ROUND CONNECTION PID PROCESS QUERY_FILE" a line): imported by its checks."""
import collections
import gzip


def rounds_of(pushes, pid):
    """{round: {process: [profile bytes, ...]}} of `pid`'s pushes."""
    rounds = collections.defaultdict(lambda: collections.defaultdict(list))
    for number, _, pushed_pid, process, path in (line.split() for line in open(pushes)):
        if pushed_pid == pid:
            rounds[number][process].append(gzip.open(path[:-len(".query")] + ".pb.gz").read())
    return rounds


def profile_counts(rounds):
    """How many profiles each process has in each round, to print."""
    return [{process: len(profiles) for process, profiles in pushed.items()}
            for pushed in rounds.values()]
