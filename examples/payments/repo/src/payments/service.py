"""Payment creation and capture."""

from dataclasses import dataclass
from datetime import timedelta

from .gateway import Gateway, GatewayDeclined, GatewayThrottled
from .receipts import send_receipt

# Authorisations are voided when capture does not happen in time.
DEFAULT_CAPTURE_TIMEOUT = timedelta(seconds=30)
MAX_CAPTURE_TIMEOUT = timedelta(seconds=600)


class CardDeclined(Exception):
    code = "CARD_DECLINED"
    status = 402


class RateLimited(Exception):
    code = "RATE_LIMITED"
    status = 429


@dataclass
class CreatePayment:
    amount: int
    currency: str
    capture_timeout: int | None = None
    customer_email: str | None = None


def capture_window(request: CreatePayment) -> timedelta:
    if request.capture_timeout is None:
        return DEFAULT_CAPTURE_TIMEOUT
    # The wire value is whole seconds.
    window = timedelta(seconds=request.capture_timeout)
    if window > MAX_CAPTURE_TIMEOUT:
        raise ValueError("capture_timeout must be at most 600")
    return window


def create_payment(gateway: Gateway, request: CreatePayment) -> str:
    try:
        auth = gateway.authorise(request.amount, request.currency)
    except GatewayDeclined as exc:
        # A decline is final for this card: retrying the same request is declined again.
        raise CardDeclined(str(exc)) from exc
    except GatewayThrottled as exc:
        # Throttling is transient; clients back off and retry.
        raise RateLimited(str(exc)) from exc
    gateway.schedule_void(auth.id, after=capture_window(request))
    if request.customer_email:
        send_receipt(request.customer_email, auth.id)
    return auth.id
