from datetime import timedelta

from payments.service import CreatePayment, capture_window


def test_capture_timeout_is_seconds():
    request = CreatePayment(amount=1000, currency="EUR", capture_timeout=45)
    assert capture_window(request) == timedelta(seconds=45)


def test_default_window():
    request = CreatePayment(amount=1000, currency="EUR")
    assert capture_window(request) == timedelta(seconds=30)
