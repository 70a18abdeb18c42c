"""Reads a capture's perf_script.out for the watch tests: each sample's
time and whether its stack holds a function.

    watch_samples.py calm-before-spike PERF_SCRIPT CALM SPIKE
        prints the seconds from the first CALM sample to the first SPIKE
        sample, then how many of the whole seconds before that first SPIKE
        sample (counting back, at most 10) hold a CALM sample without a gap
    watch_samples.py span PERF_SCRIPT
        prints the seconds from the first sample to the last
    watch_samples.py repeated PERF_SCRIPT
        prints how many samples repeat another's thread and time
"""
import sys


def samples(path, with_thread=False):
    """(time, frames) of each sample: a header line, then its frames; with
    its thread (PID/TID) first when asked."""
    time, frames, thread = None, [], None
    with open(path, errors="replace") as text:
        for line in text:
            if not line.strip():
                if time is not None:
                    yield (thread, time, frames) if with_thread else (time, frames)
                time, frames = None, []
            elif not line[0].isspace():
                header = line.split(":")[0].split()
                time, frames, thread = float(header[-1]), [], header[-3]
            else:
                frames.append(line.split()[1] if len(line.split()) > 1 else "")
    if time is not None:
        yield (thread, time, frames) if with_thread else (time, frames)


def calm_before_spike(path, calm, spike):
    calm_times = [t for t, frames in samples(path) if calm in frames]
    spike_times = [t for t, frames in samples(path) if spike in frames]
    if not calm_times or not spike_times:
        print(f"0 0 ({len(calm_times)} {calm} samples, {len(spike_times)} {spike} samples)")
        return
    first_spike = min(spike_times)
    seconds = 0
    while seconds < 10 and any(
        first_spike - seconds - 1 <= t < first_spike - seconds for t in calm_times
    ):
        seconds += 1
    print(f"{first_spike - min(calm_times):.3f} {seconds}")


def span(path):
    times = [t for t, _ in samples(path)]
    print(f"{max(times) - min(times):.3f}" if times else "0")


def repeated(path):
    keys = [(thread, time) for thread, time, _ in samples(path, with_thread=True)]
    print(len(keys) - len(set(keys)))


if __name__ == "__main__":
    if sys.argv[1] == "calm-before-spike":
        calm_before_spike(*sys.argv[2:5])
    elif sys.argv[1] == "repeated":
        repeated(sys.argv[2])
    else:
        span(sys.argv[2])
