from flask import Blueprint, jsonify, request

from .exports import ExportError, start_export

bp = Blueprint("reports", __name__)


@bp.post("/reports/<report_id>/exports")
def create_export(report_id: str):
    body = request.get_json(silent=True) or {}
    try:
        job = start_export(
            report_id=report_id,
            fmt=body.get("format", "csv"),
            export_timeout=body.get("export_timeout"),
            notify_url=body.get("notify_url"),
        )
    except ExportError as e:
        return jsonify({"code": e.code, "message": str(e)}), e.status
    return jsonify({"export_id": job.id, "state": job.state, "poll_interval": 5}), 202
