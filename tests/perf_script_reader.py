"""Reads perf.data.txt (perf script text) by the rules of PerfView's importer
(TraceEvent's LinuxPerfScriptEventParser), from a NAME.trace.zip or a file:

  - the first zip entry whose name ends in .data.txt;
  - header: the comm ends where its state machine finds " PID/TID" (scanning
    forward; a failed candidate consumes the character that ended it), then
    PID[/TID], [CPU], TIME:, PERIOD, EVENT:;
  - frames: TAB lines "ADDR SYMBOL (DSO)"; the symbol is everything before
    the last '(', "+0x.." stripped, outer brackets removed; the module is the
    DSO's base name; with a DSO ending in .map the first [Assembly] token of
    the symbol is the module and a trailing [Tier] is split off;
  - a sample ends at a blank line.

    perf_script_reader.py summary TRACE        samples, cpus, pids, events
    perf_script_reader.py share TRACE REGEX    % of samples with a frame
                                               (module!symbol) matching REGEX
    perf_script_reader.py leaf TRACE REGEX     % of samples whose leaf matches
    perf_script_reader.py frames TRACE REGEX   distinct frames matching REGEX,
                                               as "[tier] module!symbol"
"""
import re
import sys
import zipfile

TIERS = {"MinOptJitted", "Optimized", "QuickJitted", "OptimizedTier1", "ReadyToRun",
         "PreJIT", "QuickJittedOSR", "OptimizedTier1OSR", "Tier0", "Tier1",
         "InstrumentedTier", "InstrumentedTierOptimized", "OptimizedTier1Instrumented"}


def open_text(path):
    if path.endswith(".data.txt"):
        return open(path, encoding="utf-8", errors="replace").read()
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.lower().endswith(".data.txt"):
                return archive.read(name).decode("utf-8", errors="replace")
    sys.exit(f"{path}: no *.data.txt entry")


def comm_end(line):
    """PerfView's FindEndOfProcessCommand, on one header line."""
    first_space, seen_digit = -1, False
    if line[:1].isdigit():
        first_space, seen_digit = 0, True
    index = 0
    while True:
        index += 1
        if index >= len(line):
            return -1
        char = line[index]
        if first_space < 0:
            if char.isspace():
                first_space = index
            else:
                first_space, seen_digit = -1, False
        elif not seen_digit:
            if char.isdigit():
                seen_digit = True
            elif not char.isspace():
                first_space, seen_digit = -1, False
        else:
            following = line[index + 1:index + 2]
            if char == "/" and following.isdigit():
                return first_space
            if not char.isdigit():
                if following == "[":
                    return first_space
                first_space, seen_digit = -1, False


HEADER = re.compile(r"\s*(\d+)(?:/(\d+))?\s*(?:\[(\d+)\])?\s*([\d.]+):\s*(\d+)?\s*([^:]*):(.*)$")


def strip_brackets(text):
    while len(text) >= 2 and ((text[0] == "(" and text[-1] == ")") or
                              (text[0] == "[" and text[-1] == "]")):
        text = text[1:-1]
    return text


def parse_frame(line):
    body = line.strip()
    _, _, rest = body.partition(" ")
    symbol, _, module = rest.rpartition("(")
    module = strip_brackets("(" + module.strip())  # the last "(" starts the DSO
    symbol = strip_brackets(symbol.strip())
    if module.endswith(".map"):
        for index, token in enumerate(symbol.split(" ")):
            if len(token) > 2 and token[0] == "[" and token[-1] == "]":
                module = token[1:-1]
                symbol = " ".join(symbol.split(" ")[index + 1:]).strip()
                break
    module = module.replace("\\", "/").rsplit("/", 1)[-1]
    offset = symbol.rfind("+0x")
    if 0 < offset < len(symbol) - 3:
        symbol = symbol[:offset]
    tier = ""
    match = re.search(r"\[(\w+)\]$", symbol)
    if match and match.group(1) in TIERS:
        tier, symbol = match.group(1), symbol[:match.start()]
    return tier, f"{module}!{symbol}"


def samples(path):
    text = open_text(path)
    for number, block in enumerate(re.split(r"\n\s*\n", text.strip("\n")), 1):
        lines = block.split("\n")
        header = lines[0].lstrip()
        end = comm_end(header)
        if end < 0:
            sys.exit(f"{path}: sample {number}: PerfView finds no PID/TID after the comm: {header!r}")
        match = HEADER.match(header[end:])
        if not match:
            sys.exit(f"{path}: sample {number}: not a header: {header!r}")
        for frame in lines[1:]:
            if not frame.startswith("\t"):
                sys.exit(f"{path}: sample {number}: frame line without a TAB: {frame!r}")
        yield {
            "comm": header[:end].strip(), "pid": int(match.group(1)),
            "tid": int(match.group(2) or match.group(1)),
            "cpu": int(match.group(3)) if match.group(3) else None,
            "time": float(match.group(4)), "event": match.group(6).strip(),
            "frames": [parse_frame(line) for line in lines[1:]],
        }


def main():
    command, path = sys.argv[1], sys.argv[2]
    found = list(samples(path))
    total = len(found)
    if command == "summary":
        cpus = sorted({s["cpu"] for s in found if s["cpu"] is not None})
        print(f"samples {total}")
        print(f"without_cpu {sum(s['cpu'] is None for s in found)}")
        print(f"cpus {' '.join(map(str, cpus))}")
        print(f"comms {'|'.join(sorted({s['comm'] for s in found}))}")
        print(f"events {' '.join(sorted({s['event'] for s in found}))}")
        return
    pattern = re.compile(sys.argv[3])
    if command == "share":
        matched = sum(any(pattern.search(name) for _, name in s["frames"]) for s in found)
        print(f"{100.0 * matched / total:.1f}" if total else "0")
    elif command == "leaf":
        matched = sum(bool(s["frames"]) and bool(pattern.search(s["frames"][0][1])) for s in found)
        print(f"{100.0 * matched / total:.1f}" if total else "0")
    elif command == "frames":
        names = {f"[{tier}] {name}" for s in found for tier, name in s["frames"]
                 if pattern.search(name)}
        print("\n".join(sorted(names)))
    else:
        sys.exit(__doc__)


main()
