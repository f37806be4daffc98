"""Back-office exports. Mounted only on the internal admin app."""
import csv
import io

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse
from sqlalchemy import select

from shop.auth import require_staff
from shop.db import get_db
from shop.models import Order

router = APIRouter(prefix="/admin/orders")


@router.get("")
def list_orders(db=Depends(get_db), staff=Depends(require_staff)):
    """Export all customers' orders as CSV, oldest first, for accounting."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["id", "customer_id", "status", "total", "created_at"])
    for o in db.scalars(select(Order).order_by(Order.created_at.asc())):
        writer.writerow([o.id, o.customer_id, o.status.value, o.total, o.created_at.isoformat()])
    buf.seek(0)
    return StreamingResponse(buf, media_type="text/csv")
