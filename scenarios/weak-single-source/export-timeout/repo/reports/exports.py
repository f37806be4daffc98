from __future__ import annotations

import exportq

from .catalog import find_report

FORMATS = {"csv", "xlsx", "parquet"}
DEFAULT_EXPORT_TIMEOUT = 30


class ExportError(Exception):
    def __init__(self, code: str, message: str, status: int):
        super().__init__(message)
        self.code = code
        self.status = status


_queue = exportq.Queue("report-exports")


def start_export(report_id: str, fmt: str, export_timeout: int | None, notify_url: str | None):
    report = find_report(report_id)
    if report is None:
        raise ExportError("REPORT_NOT_FOUND", f"no report {report_id}", 404)
    if fmt not in FORMATS:
        raise ExportError("UNSUPPORTED_FORMAT", f"format must be one of {sorted(FORMATS)}", 422)
    if _queue.depth() > 500:
        raise ExportError("EXPORT_QUEUE_FULL", "too many exports waiting, try again later", 503)

    # export_timeout is in minutes; the worker kills the job once it runs that long.
    job = _queue.enqueue(
        "render_report",
        report_id=report.id,
        fmt=fmt,
        timeout=export_timeout or DEFAULT_EXPORT_TIMEOUT,
        notify_url=notify_url,
    )
    return job
