from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    issuer: str = "https://auth.internal.example"
    signing_key_id: str = "k-2024-07"
    # Refresh tokens live much longer than access tokens and are counted in days.
    refresh_ttl_days: int = 30
    # Cache of public keys fetched from the JWKS endpoint, milliseconds.
    jwks_cache_ttl_ms: int = 300_000


SETTINGS = Settings()
