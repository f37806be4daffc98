import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .settings import Settings


@dataclass
class Session:
    session_id: str
    user_id: str
    persistent: bool
    idle: timedelta
    expires_at: datetime


class SessionStore:
    """Sessions in Redis, keyed by id, with a sliding expiry."""

    def __init__(self, redis, settings: Settings):
        self._redis = redis
        self._settings = settings

    def _idle_window(self, idle_timeout):
        if idle_timeout is None:
            idle_timeout = self._settings.default_idle_timeout_ms
        idle_timeout = min(int(idle_timeout), self._settings.max_idle_timeout_ms)
        return timedelta(milliseconds=idle_timeout)

    def open(self, user_id: str, persistent: bool, idle_timeout=None) -> Session:
        idle = self._idle_window(idle_timeout)
        now = datetime.now(timezone.utc)
        session = Session(
            session_id=secrets.token_urlsafe(32),
            user_id=user_id,
            persistent=persistent,
            idle=idle,
            expires_at=now + idle,
        )
        self._redis.set(
            f"session:{session.session_id}",
            session.user_id,
            px=int(idle.total_seconds() * 1000),
        )
        return session

    def touch(self, session: Session) -> None:
        session.expires_at = datetime.now(timezone.utc) + session.idle
        self._redis.pexpire(f"session:{session.session_id}", int(session.idle.total_seconds() * 1000))

    def revoke(self, session_id: str) -> bool:
        return bool(self._redis.delete(f"session:{session_id}"))
