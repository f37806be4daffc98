import datetime as dt

import jwt
import pytest

from authsvc import tokens

NOW = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)


def decode(out):
    return jwt.decode(out["access_token"], "k", algorithms=["HS256"], audience="billing")


def test_default_lifetime_is_fifteen_minutes():
    out = tokens.issue("svc-a", "billing", [], None, "k", now=NOW)
    assert out["expires_at"] == "2024-05-01T12:15:00+00:00"


def test_explicit_ttl_of_3600_expires_an_hour_later():
    out = tokens.issue("svc-a", "billing", ["read"], 3600, "k", now=NOW)
    assert out["expires_at"] == "2024-05-01T13:00:00+00:00"
    claims = decode(out)
    assert claims["exp"] - claims["iat"] == 3600


def test_ttl_above_one_day_is_rejected():
    with pytest.raises(tokens.TokenError) as e:
        tokens.issue("svc-a", "billing", [], 86_401, "k", now=NOW)
    assert e.value.code == "TTL_OUT_OF_RANGE"
