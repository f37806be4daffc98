from __future__ import annotations

from dataclasses import dataclass

import requests

CATALOG_URL = "http://catalog.internal:8080"
# Seconds; a catalog lookup that takes longer than this is treated as "not found".
CATALOG_TIMEOUT = 3


@dataclass
class Report:
    id: str
    title: str
    owner: str


def find_report(report_id: str) -> Report | None:
    resp = requests.get(f"{CATALOG_URL}/reports/{report_id}", timeout=CATALOG_TIMEOUT)
    if resp.status_code == 404:
        return None
    resp.raise_for_status()
    data = resp.json()
    return Report(id=data["id"], title=data["title"], owner=data["owner"])
