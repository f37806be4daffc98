from .models import Invoice

_INVOICES: dict[str, Invoice] = {}
_COUNTRIES: dict[str, str] = {}


def load_invoice(invoice_id: str) -> Invoice | None:
    return _INVOICES.get(invoice_id)


def load_customer_country(customer_id: str) -> str | None:
    return _COUNTRIES.get(customer_id)
