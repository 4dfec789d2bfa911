"""Read scalars back from TensorBoard event files (TFRecord framing of `Event` protos, parsed
with tensorboardX's own protobuf classes), to test what a run logged."""

from __future__ import annotations

import struct
from collections import defaultdict
from pathlib import Path

from tensorboardX.proto import event_pb2


def scalars(directory: Path) -> dict[str, list[tuple[int, float]]]:
    """{tag: [(step, value), ...]} over every event file in `directory`."""
    out: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for path in sorted(Path(directory).glob("events.out.tfevents.*")):
        data = path.read_bytes()
        offset = 0
        while offset < len(data):
            (length,) = struct.unpack_from("<Q", data, offset)
            record = data[offset + 12: offset + 12 + length]  # skip the length's crc
            offset += 12 + length + 4  # and the data's crc
            event = event_pb2.Event.FromString(record)
            for value in event.summary.value:
                out[value.tag].append((event.step, value.simple_value))
    return out
