from datetime import timedelta

import fakeredis
import pytest

from authsvc.sessions import SessionStore
from authsvc.settings import Settings


@pytest.fixture
def store():
    settings = Settings(
        redis_url="redis://unused",
        default_idle_timeout_ms=1_800_000,
        max_idle_timeout_ms=86_400_000,
        refresh_timeout_seconds=1_209_600,
        lockout_threshold=5,
    )
    return SessionStore(fakeredis.FakeRedis(), settings)


def test_default_idle_window_applies_when_omitted(store):
    session = store.open("u_1", persistent=False)
    assert session.idle == store._idle_window(None)


def test_revoke_is_reported_once(store):
    session = store.open("u_1", persistent=True)
    assert store.revoke(session.session_id) is True
    assert store.revoke(session.session_id) is False


def test_touch_moves_expiry_forward(store):
    session = store.open("u_1", persistent=False)
    before = session.expires_at
    store.touch(session)
    assert session.expires_at >= before
    assert session.idle > timedelta(0)
