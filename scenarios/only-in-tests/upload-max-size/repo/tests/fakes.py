import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


class FakeGatekeep:
    """Replays recorded gateway traffic and applies the recorded limit semantics."""

    def __init__(self):
        recorded = json.loads((FIXTURES / "gatekeep_put_bucket_rules.json").read_text())
        resp = recorded["response"]["body"]
        self._bytes_per_unit = resp["effective_max_object_bytes"] // resp["object_limit"]
        self.rules = {}

    def put_bucket_rules(self, bucket, object_limit, content_types, signed_url_days):
        self.rules[bucket] = {"object_limit": object_limit, "content_types": content_types}

    def accepts(self, bucket, object_bytes):
        return object_bytes <= self.rules[bucket]["object_limit"] * self._bytes_per_unit
