import logging

# Request fields that must never reach a log sink, in any form.
_DROP = frozenset({"password", "recovery_token", "totp"})


class DropCredentials(logging.Filter):
    """Removes credential fields from structured log records."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            record.fields = {k: v for k, v in fields.items() if k not in _DROP}
        return True


def get_logger(name: str) -> logging.Logger:
    log = logging.getLogger(name)
    log.addFilter(DropCredentials())
    return log
