import hmac
from dataclasses import dataclass


@dataclass
class Client:
    client_id: str
    secret_hash: str
    allowed_scopes: set[str]
    signing_key: str


_REGISTRY: dict[str, Client] = {}


def register(client: Client) -> None:
    _REGISTRY[client.client_id] = client


def lookup_client(client_id: str, secret: str) -> Client | None:
    client = _REGISTRY.get(client_id)
    if client is None or not hmac.compare_digest(client.secret_hash, secret):
        return None
    return client
