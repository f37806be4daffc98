import re

MAX_TAGS = 16
MAX_TAG_VALUE_LENGTH = 200
_NAME = re.compile(r"^[a-z0-9._]+$")


class InvalidMetric(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def check_name(name: str) -> None:
    if not _NAME.match(name):
        raise InvalidMetric("INVALID_METRIC_NAME", "The metric name contains characters outside [a-z0-9._].")


def normalise_tags(tags: dict | None) -> dict[str, str]:
    tags = tags or {}
    if len(tags) > MAX_TAGS:
        raise InvalidMetric("TOO_MANY_TAGS", "A sample may carry at most 16 tags.")
    out = {}
    for key, value in tags.items():
        # A tag value is free text, truncated rather than rejected.
        out[str(key).lower()] = str(value)[:MAX_TAG_VALUE_LENGTH]
    return out
