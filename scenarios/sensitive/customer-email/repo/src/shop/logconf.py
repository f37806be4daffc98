import logging

# Body fields that identify a person. Masked in every log record before it leaves the
# process (GDPR: the log cluster is readable by all engineers and kept for 90 days).
PERSONAL_FIELDS = frozenset({
    "customer_email",
    "shipping_address",
    "billing_address",
    "phone",
})

MASK = "***"


def _mask(value):
    if isinstance(value, dict):
        return {k: (MASK if k in PERSONAL_FIELDS else _mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


class PersonalDataFilter(logging.Filter):
    """Replaces personal fields in `record.body` with a mask."""

    def filter(self, record: logging.LogRecord) -> bool:
        body = getattr(record, "body", None)
        if body is not None:
            record.body = _mask(body)
        return True


def configure() -> None:
    handler = logging.StreamHandler()
    handler.addFilter(PersonalDataFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s %(body)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
