import logging

from shop.logconf import MASK, PersonalDataFilter


def make_record(body):
    record = logging.LogRecord("shop.orders", logging.INFO, __file__, 1, "place_order", None, None)
    record.body = body
    return record


def test_customer_email_is_masked():
    record = make_record({"cart_id": "c_1", "customer_email": "ana@example.org"})
    PersonalDataFilter().filter(record)
    assert record.body == {"cart_id": "c_1", "customer_email": MASK}


def test_nested_addresses_are_masked():
    record = make_record({"shipping_address": {"name": "Ana", "city": "Porto"}, "gift_message": "Enjoy"})
    PersonalDataFilter().filter(record)
    assert record.body["shipping_address"] == MASK
    assert record.body["gift_message"] == "Enjoy"
