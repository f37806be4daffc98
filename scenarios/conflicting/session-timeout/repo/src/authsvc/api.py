from flask import Blueprint, current_app, jsonify, request

from .lockout import Lockout
from .sessions import SessionStore

bp = Blueprint("sessions", __name__)


def init(app, redis, settings, accounts):
    app.extensions["sessions"] = SessionStore(redis, settings)
    app.extensions["lockout"] = Lockout(redis, settings.lockout_threshold)
    app.extensions["accounts"] = accounts
    app.register_blueprint(bp)


def _error(code, status, message):
    return jsonify({"code": code, "message": message}), status


@bp.post("/sessions")
def create_session():
    body = request.get_json(force=True)
    ext = current_app.extensions
    lockout, accounts, store = ext["lockout"], ext["accounts"], ext["sessions"]
    username = body["username"]
    if lockout.is_locked(username):
        return _error("ACCOUNT_LOCKED", 423, "Too many failed attempts; the account is locked for a while.")
    user = accounts.verify_password(username, body["password"])
    if user is None:
        lockout.record_failure(username)
        return _error("INVALID_CREDENTIALS", 401, "Username or password is wrong.")
    lockout.reset(username)
    session = store.open(user.id, bool(body.get("remember_me")), body.get("idle_timeout"))
    return jsonify({"session_id": session.session_id, "expires_at": session.expires_at.isoformat()}), 201


@bp.delete("/sessions/<session_id>")
def delete_session(session_id):
    if not current_app.extensions["sessions"].revoke(session_id):
        return _error("SESSION_NOT_FOUND", 404, "No such session.")
    return "", 204
