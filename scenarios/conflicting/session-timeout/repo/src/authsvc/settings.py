import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    redis_url: str
    # Sliding expiry applied when the client does not send idle_timeout.
    default_idle_timeout_ms: int
    # Upper bound for any client-supplied idle timeout.
    max_idle_timeout_ms: int
    # How long a refresh cookie stays valid, in seconds (used by the SSO bridge).
    refresh_timeout_seconds: int
    lockout_threshold: int


def load() -> Settings:
    return Settings(
        redis_url=os.environ.get("AUTHSVC_REDIS_URL", "redis://localhost:6379/3"),
        default_idle_timeout_ms=int(os.environ.get("AUTHSVC_IDLE_TIMEOUT_MS", "1800000")),
        max_idle_timeout_ms=int(os.environ.get("AUTHSVC_MAX_IDLE_TIMEOUT_MS", "86400000")),
        refresh_timeout_seconds=int(os.environ.get("AUTHSVC_REFRESH_TIMEOUT", "1209600")),
        lockout_threshold=int(os.environ.get("AUTHSVC_LOCKOUT_THRESHOLD", "5")),
    )
