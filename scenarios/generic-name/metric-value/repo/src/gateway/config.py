import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    key: str
    value: str
    secret: bool = False


def load_settings() -> dict[str, Setting]:
    """Settings come from GATEWAY_* environment variables; `value` is the raw string."""
    settings = {}
    for env_key, raw in os.environ.items():
        if env_key.startswith("GATEWAY_"):
            key = env_key.removeprefix("GATEWAY_").lower()
            settings[key] = Setting(key=key, value=raw, secret=key.endswith("_password"))
    return settings


BUFFER_CAPACITY = int(os.environ.get("GATEWAY_BUFFER_CAPACITY", "50000"))
FLUSH_EVERY_SECONDS = 5
