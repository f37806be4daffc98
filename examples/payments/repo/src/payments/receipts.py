"""Receipt delivery."""

import logging

log = logging.getLogger(__name__)


def redact(email: str) -> str:
    user, _, domain = email.partition("@")
    return user[:1] + "***@" + domain


def send_receipt(customer_email: str, payment_id: str) -> None:
    # Personal data: never log the address in clear.
    log.info("sending receipt for %s to %s", payment_id, redact(customer_email))
