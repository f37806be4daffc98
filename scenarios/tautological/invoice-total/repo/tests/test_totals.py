from invoicing.models import Invoice, LineItem
from invoicing.totals import compute_totals


def make(coupon=None):
    return Invoice(
        id="in_1", customer_id="cus_1", currency="EUR", coupon_code=coupon,
        lines=[LineItem("Pro plan", 1, 10_000), LineItem("Donation", 1, 2_000, taxable=False)],
    )


def test_total_adds_tax_on_taxable_lines():
    inv = compute_totals(make(), "DE")
    assert (inv.subtotal, inv.discount, inv.tax, inv.invoice_total) == (12_000, 0, 1_900, 13_900)


def test_coupon_applies_before_tax():
    inv = compute_totals(make("WELCOME10"), "DE")
    assert inv.discount == 1_200
    assert inv.tax == 1_710
    assert inv.invoice_total == 12_000 - 1_200 + 1_710


def test_no_tax_for_us_customers():
    inv = compute_totals(make(), "us")
    assert inv.invoice_total == inv.subtotal
