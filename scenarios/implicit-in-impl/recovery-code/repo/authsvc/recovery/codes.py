import hashlib
import hmac
import secrets

CODE_COUNT = 10
_SALT_BYTES = 16


def generate() -> list[str]:
    """Ten fresh codes, shown to the member exactly once at enrolment."""
    return [f"{secrets.randbelow(10**5):05d}-{secrets.randbelow(10**5):05d}" for _ in range(CODE_COUNT)]


def digest(code: str, salt: bytes | None = None) -> tuple[bytes, bytes]:
    salt = salt or secrets.token_bytes(_SALT_BYTES)
    return salt, hashlib.scrypt(code.replace("-", "").encode(), salt=salt, n=2**14, r=8, p=1)


def matches(code: str, salt: bytes, stored: bytes) -> bool:
    _, candidate = digest(code, salt)
    return hmac.compare_digest(candidate, stored)
