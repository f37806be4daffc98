from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LineItem:
    description: str
    quantity: int
    unit_price: int  # minor units
    taxable: bool = True


@dataclass
class Invoice:
    id: str
    customer_id: str
    currency: str
    lines: list[LineItem] = field(default_factory=list)
    coupon_code: str | None = None
    subtotal: int = 0
    discount: int = 0
    tax: int = 0
    invoice_total: int = 0
    status: str = "draft"
