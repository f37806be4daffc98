from __future__ import annotations

from .models import Invoice
from .tax import tax_rate_bp

COUPONS = {"WELCOME10": 1000, "PARTNER25": 2500}  # basis points off the subtotal


def compute_totals(inv: Invoice, country: str) -> Invoice:
    """Fill subtotal, discount, tax and invoice_total from the invoice lines.

    Discounts apply before tax; tax is charged only on taxable lines, after their share
    of the discount.
    """
    inv.subtotal = sum(l.quantity * l.unit_price for l in inv.lines)
    off_bp = COUPONS.get(inv.coupon_code or "", 0)
    inv.discount = inv.subtotal * off_bp // 10_000
    taxable = sum(l.quantity * l.unit_price for l in inv.lines if l.taxable)
    taxable_after_discount = taxable - taxable * off_bp // 10_000
    inv.tax = round(taxable_after_discount * tax_rate_bp(country) / 10_000)
    inv.invoice_total = inv.subtotal - inv.discount + inv.tax
    return inv


def legacy_total(inv: Invoice) -> int:
    # Pre-2023 invoices showed the net amount only; kept for re-rendering old PDFs.
    return inv.subtotal - inv.discount
