"""Checks frames named from ReadyToRun images against the runtime's own names.

    r2r_jitdump_check.py PERF_SCRIPT JITDUMP

For every frame of perf_script.out in a .dll, finds the jitdump's [PreJIT]
code-load record holding its address (or, for a return address, the byte
before it) and compares the names. Prints the counts; exits 1 when a frame
has another name than the runtime gives, or when no frame could be checked.
A frame left as [X.dll] is counted apart: the tests bound their share.
"""
import re
import struct
import sys

JIT_CODE_LOAD = 0


def prejit_records(path):
    data = open(path, "rb").read()
    header_size = struct.unpack_from("<I", data, 8)[0]
    records, offset = [], header_size
    while offset + 16 <= len(data):
        kind, size = struct.unpack_from("<II", data, offset)
        if size < 16 or offset + size > len(data):
            break  # the runtime may still be writing the last record
        if kind == JIT_CODE_LOAD:
            code_address, code_size = struct.unpack_from("<QQ", data, offset + 32)
            end = data.index(b"\0", offset + 56)
            name = data[offset + 56:end].decode("utf-8", "replace")
            if name.endswith("[PreJIT]"):
                records.append((code_address, code_address + code_size, name))
        offset += size
    return sorted(records)


def name_at(records, address):
    for start, end, name in records:
        if start <= address < end:
            return name
    return None


def main():
    records = prejit_records(sys.argv[2])
    frame = re.compile(r"^\t\s*([0-9a-f]+) (.*) \((.*\.dll)\)$")
    checked = unknown = unnamed = 0
    wrong = []
    for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
        match = frame.match(line.rstrip("\n"))
        if not match:
            continue
        address, ours = int(match.group(1), 16), match.group(2)
        theirs = name_at(records, address) or name_at(records, address - 1)
        if theirs is None:
            unknown += 1
        elif re.fullmatch(r"\[[^]\s]+\.dll\]", ours):
            unnamed += 1  # left as [X.dll]: the callers' shares of those are checked
        elif theirs == ours:
            checked += 1
        else:
            wrong.append(f"{address:x}: ours {ours!r}, the runtime's {theirs!r}")
    print(f"{checked} frames named as the runtime names them, {len(wrong)} otherwise, "
          f"{unnamed} left unnamed, {unknown} not in the jitdump")
    for text in wrong[:10]:
        print(text)
    sys.exit(1 if wrong or checked == 0 else 0)


main()
