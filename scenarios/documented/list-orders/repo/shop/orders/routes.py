from fastapi import APIRouter, Depends, HTTPException, Query
from sqlalchemy.orm import Session

from shop.auth import current_customer
from shop.db import get_db
from shop.orders import repository
from shop.orders.schemas import OrderOut, OrderPage

router = APIRouter(prefix="/orders", tags=["orders"])


@router.get("", response_model=OrderPage)
def list_orders(
    limit: int = Query(20, ge=1, le=100),
    cursor: str | None = None,
    include_cancelled: bool = False,
    customer=Depends(current_customer),
    db: Session = Depends(get_db),
):
    try:
        orders, next_cursor = repository.page_for_customer(
            db, customer.id, limit, cursor, include_cancelled)
    except repository.InvalidCursor:
        raise HTTPException(400, detail={"code": "INVALID_CURSOR"})
    return OrderPage(orders=[OrderOut.from_model(o) for o in orders], next_cursor=next_cursor)


@router.get("/{order_id}", response_model=OrderOut)
def get_order(order_id: str, customer=Depends(current_customer), db: Session = Depends(get_db)):
    order = db.get(repository.Order, order_id)
    if order is None or order.customer_id != customer.id:
        raise HTTPException(404, detail={"code": "ORDER_NOT_FOUND"})
    return OrderOut.from_model(order)
