from datetime import datetime, timezone

from flask import Blueprint, current_app, jsonify, request

from .buffer import BufferFull, Point
from .tags import InvalidMetric, check_name, normalise_tags

bp = Blueprint("metrics", __name__)


@bp.post("/v1/metrics")
def record_metric():
    body = request.get_json(force=True)
    try:
        check_name(body["name"])
        tags = normalise_tags(body.get("tags"))
    except InvalidMetric as err:
        return jsonify({"code": err.code, "message": str(err)}), 422
    ts = body.get("timestamp")
    ts = datetime.fromisoformat(ts) if ts else datetime.now(timezone.utc)
    # TODO(obs-412): SDKs send counters and gauges to this endpoint alike and the request has
    # no kind field. Agree with the SDK team what `value` means before rollups depend on it.
    point = Point(
        project=request.headers["X-Project"],
        name=body["name"],
        value=float(body["value"]),
        tags=tags,
        ts=ts,
    )
    try:
        sample_id = current_app.extensions["buffer"].append(point)
    except BufferFull:
        return jsonify({"code": "BUFFER_FULL", "message": "The ingest buffer is full; nothing was stored."}), 503
    return jsonify({"sample_id": sample_id}), 202
