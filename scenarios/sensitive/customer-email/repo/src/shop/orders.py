import logging

from flask import Blueprint, current_app, jsonify, request

from .notify import confirmation

log = logging.getLogger("shop.orders")
bp = Blueprint("orders", __name__)


class OutOfStock(Exception):
    pass


@bp.post("/orders")
def place_order():
    body = request.get_json(force=True)
    log.info("place_order", extra={"body": body})
    carts, inventory, mailer = (current_app.extensions[k] for k in ("carts", "inventory", "mailer"))
    cart = carts.get_open(body["cart_id"])
    if cart is None:
        return jsonify({"code": "CART_NOT_FOUND", "message": "No open cart with this id."}), 404
    try:
        inventory.reserve(cart.lines)
    except OutOfStock:
        return jsonify({"code": "OUT_OF_STOCK", "message": "At least one item is no longer available."}), 409
    except TimeoutError:
        return jsonify({"code": "INVENTORY_TIMEOUT", "message": "Stock could not be reserved in time; nothing was ordered."}), 503
    order = carts.close_into_order(cart, body["shipping_address"], body.get("gift_message"))
    mailer.send(confirmation(order.id, body["customer_email"], order.total, order.currency))
    return jsonify({"order_id": order.id, "total": order.total}), 201
