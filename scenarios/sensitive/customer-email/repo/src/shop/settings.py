import os

# The shop's own public contact addresses; printed in every mail footer.
SUPPORT_EMAIL = os.environ.get("SHOP_SUPPORT_EMAIL", "help@shop.example")
SENDER_EMAIL = os.environ.get("SHOP_SENDER_EMAIL", "orders@shop.example")

INVENTORY_TIMEOUT_SECONDS = float(os.environ.get("SHOP_INVENTORY_TIMEOUT", "2.5"))
