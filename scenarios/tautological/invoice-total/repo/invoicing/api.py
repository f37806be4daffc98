from fastapi import APIRouter, HTTPException

from .store import load_invoice, load_customer_country
from .totals import compute_totals

router = APIRouter()


@router.get("/invoices/{invoice_id}")
def get_invoice(invoice_id: str):
    inv = load_invoice(invoice_id)
    if inv is None:
        raise HTTPException(404, {"code": "INVOICE_NOT_FOUND"})
    country = load_customer_country(inv.customer_id)
    if country is None:
        raise HTTPException(409, {"code": "BILLING_COUNTRY_MISSING"})
    inv = compute_totals(inv, country)
    return {
        "invoice_id": inv.id,
        "status": inv.status,
        "currency": inv.currency,
        "subtotal": inv.subtotal,
        "discount": inv.discount,
        "tax": inv.tax,
        "invoice_total": inv.invoice_total,
    }
