from email.message import EmailMessage

from . import settings


def confirmation(order_id: str, to: str, total_minor: int, currency: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = settings.SENDER_EMAIL
    msg["Reply-To"] = settings.SUPPORT_EMAIL
    msg["To"] = to
    msg["Subject"] = f"Your order {order_id}"
    msg.set_content(f"Thank you! We received order {order_id} ({total_minor / 100:.2f} {currency}).")
    return msg
