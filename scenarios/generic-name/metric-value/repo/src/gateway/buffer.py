import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime


class BufferFull(Exception):
    pass


@dataclass
class Point:
    project: str
    name: str
    value: float
    tags: dict[str, str]
    ts: datetime
    sample_id: str = field(default_factory=lambda: f"smp_{uuid.uuid4().hex[:16]}")


class WriteBuffer:
    """Points waiting for the next flush. Rows map 1:1 to the `samples` table columns
    (project, name, value DOUBLE, tags MAP, ts TIMESTAMP); nothing is aggregated here."""

    def __init__(self, capacity: int):
        self._capacity = capacity
        self._points: list[Point] = []
        self._lock = threading.Lock()

    def append(self, point: Point) -> str:
        with self._lock:
            if len(self._points) >= self._capacity:
                raise BufferFull()
            self._points.append(point)
        return point.sample_id

    def drain(self) -> list[Point]:
        with self._lock:
            points, self._points = self._points, []
        return points
