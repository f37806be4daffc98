from __future__ import annotations

import datetime as dt
import uuid

import jwt

from .config import SETTINGS

DEFAULT_TOKEN_TTL = 15 * 60
MAX_TOKEN_TTL = 24 * 60 * 60


class TokenError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def clamp_ttl(requested: int | None) -> int:
    if requested is None:
        return DEFAULT_TOKEN_TTL
    if requested <= 0 or requested > MAX_TOKEN_TTL:
        raise TokenError("TTL_OUT_OF_RANGE", f"token_ttl must be between 1 and {MAX_TOKEN_TTL}")
    return requested


def issue(client_id: str, audience: str, scopes: list[str], token_ttl: int | None,
          key: str, now: dt.datetime | None = None) -> dict:
    now = now or dt.datetime.now(dt.timezone.utc)
    ttl = clamp_ttl(token_ttl)
    expires_at = now + dt.timedelta(seconds=ttl)
    claims = {
        "iss": SETTINGS.issuer,
        "sub": client_id,
        "aud": audience,
        "scope": " ".join(scopes),
        "iat": int(now.timestamp()),
        "exp": int(expires_at.timestamp()),
        "jti": uuid.uuid4().hex,
    }
    token = jwt.encode(claims, key, algorithm="HS256", headers={"kid": SETTINGS.signing_key_id})
    return {"access_token": token, "expires_at": expires_at.isoformat(), "token_type": "Bearer"}
