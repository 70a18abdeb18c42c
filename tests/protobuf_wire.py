"""Protocol Buffers' wire format read by hand, for the tests and the
stand-in receiver (no protobuf package is installed here): the fields of a
message, and what a pprof profile holds per process."""
import gzip


def varint(data, at):
    """The varint at `at` and where the next field starts."""
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data):
    """(number, value) of each field of the message `data`: an int for a
    varint or fixed field, bytes for a length-delimited one."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, at = varint(data, at)
        elif wire_type == 1:
            value, at = int.from_bytes(data[at:at + 8], "little"), at + 8
        elif wire_type == 2:
            length, at = varint(data, at)
            value, at = data[at:at + length], at + length
        elif wire_type == 5:
            value, at = int.from_bytes(data[at:at + 4], "little"), at + 4
        else:
            raise ValueError(f"wire type {wire_type} at byte {at}")
        yield number, value


def message(data):
    """{number: [values]} of the fields of the message `data`."""
    found = {}
    for number, value in fields(data):
        found.setdefault(number, []).append(value)
    return found


def packed(value):
    """The integers of a repeated field: packed (bytes) or one (int)."""
    if isinstance(value, int):
        return [value]
    numbers, at = [], 0
    while at < len(value):
        number, at = varint(value, at)
        numbers.append(number)
    return numbers


def pprof_samples(gzipped):
    """The samples of a gzipped pprof profile: (labels {key: text}, values,
    function names from the leaf up)."""
    profile = gzip.decompress(gzipped)
    strings, functions, locations, raw_samples = [], {}, {}, []
    for number, value in fields(profile):
        if number == 6:
            strings.append(value.decode("utf-8", "replace"))
        elif number == 5:
            function = dict(fields(value))
            functions[function.get(1, 0)] = function.get(2, 0)
        elif number == 4:
            location = {"id": 0, "functions": []}
            for field, item in fields(value):
                if field == 1:
                    location["id"] = item
                elif field == 4:
                    location["functions"].append(dict(fields(item)).get(1, 0))
            locations[location["id"]] = location["functions"]
        elif number == 2:
            raw_samples.append(value)
    samples = []
    for raw in raw_samples:
        location_ids, values, labels = [], [], {}
        for field, item in fields(raw):
            if field == 1:
                location_ids += packed(item)
            elif field == 2:
                values += packed(item)
            elif field == 3:
                label = dict(fields(item))
                labels[strings[label.get(1, 0)]] = strings[label.get(2, 0)]
        names = [strings[functions.get(function, 0)]
                 for location in location_ids for function in locations.get(location, [])]
        samples.append((labels, values, names))
    return samples
