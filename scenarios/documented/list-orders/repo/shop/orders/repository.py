from __future__ import annotations

import base64
import json
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from shop.models import Order, OrderStatus


class InvalidCursor(ValueError):
    pass


def encode_cursor(created_at: datetime, order_id: str) -> str:
    raw = json.dumps([created_at.isoformat(), order_id]).encode()
    return base64.urlsafe_b64encode(raw).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        created_at, order_id = json.loads(base64.urlsafe_b64decode(cursor))
        return datetime.fromisoformat(created_at), order_id
    except (ValueError, TypeError) as exc:
        raise InvalidCursor(cursor) from exc


def page_for_customer(db: Session, customer_id: str, limit: int, cursor: str | None,
                      include_cancelled: bool) -> tuple[list[Order], str | None]:
    q = select(Order).where(Order.customer_id == customer_id)
    if not include_cancelled:
        q = q.where(Order.status != OrderStatus.CANCELLED)
    if cursor:
        created_at, order_id = decode_cursor(cursor)
        q = q.where((Order.created_at, Order.id) < (created_at, order_id))
    q = q.order_by(Order.created_at.desc(), Order.id.desc()).limit(limit + 1)
    rows = list(db.scalars(q))
    more = len(rows) > limit
    rows = rows[:limit]
    nxt = encode_cursor(rows[-1].created_at, rows[-1].id) if more and rows else None
    return rows, nxt
