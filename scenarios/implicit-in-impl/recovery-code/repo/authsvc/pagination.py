import base64
import json


def next_token(last_id: str) -> str:
    """Opaque continuation token for list endpoints; not a credential."""
    return base64.urlsafe_b64encode(json.dumps({"after": last_id}).encode()).decode()


def parse_token(token: str) -> str:
    return json.loads(base64.urlsafe_b64decode(token))["after"]
