from flask import Blueprint, jsonify, request

from authsvc.common.logging import get_logger
from authsvc.recovery import codes
from authsvc.store import accounts, attempts, idempotency, sessions

bp = Blueprint("recovery", __name__)
log = get_logger(__name__)


@bp.post("/auth/recovery")
def redeem():
    body = request.get_json(force=True)
    email = body["email"].strip().lower()
    key = body.get("idempotency_token")
    if key and (cached := idempotency.get(key)):
        return jsonify(cached), 200
    log.info("recovery attempt", extra={"fields": body})

    account = accounts.by_email(email)
    if account is None:
        return jsonify(code="INVALID_RECOVERY_CODE"), 401
    if account.locked:
        return jsonify(code="ACCOUNT_LOCKED"), 423
    if attempts.count(account.id) >= 5:
        return jsonify(code="TOO_MANY_ATTEMPTS"), 429

    presented = body["recovery_token"]
    for stored in account.recovery_hashes:
        if codes.matches(presented, stored.salt, stored.hash):
            accounts.consume_recovery_hash(account.id, stored.id)
            session = sessions.issue(account.id, mfa="recovery")
            result = {"session_token": session.token,
                      "remaining_codes": len(account.recovery_hashes) - 1}
            if key:
                idempotency.put(key, result, ttl=600)
            return jsonify(result), 200

    attempts.record(account.id)
    return jsonify(code="INVALID_RECOVERY_CODE"), 401
