"""UDP statsd listener for legacy agents (not used by the HTTP endpoint).

A statsd line is `name:value|type[|@rate]`. Here `value` depends on the line type:
for `c` it is an increment scaled by the sample rate, for `g` an absolute level, for `ms`
a duration in milliseconds.
"""
from datetime import datetime, timezone

from .buffer import Point


def parse_line(project: str, line: str) -> Point:
    name, rest = line.split(":", 1)
    parts = rest.split("|")
    value, kind = float(parts[0]), parts[1]
    rate = float(parts[2][1:]) if len(parts) > 2 and parts[2].startswith("@") else 1.0
    if kind == "c":
        value = value / rate
    tags = {"statsd_type": kind}
    return Point(project=project, name=name, value=value, tags=tags, ts=datetime.now(timezone.utc))
