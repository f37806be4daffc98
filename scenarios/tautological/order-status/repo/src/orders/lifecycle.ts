// Order lifecycle. Every change of `orderStatus` goes through `transition`.

export type OrderStatus = "pending_payment" | "paid" | "shipped" | "delivered" | "cancelled";

export type OrderEvent = "payment_captured" | "payment_failed" | "label_printed" | "carrier_delivered" | "cancel";

const NEXT: Record<OrderStatus, Partial<Record<OrderEvent, OrderStatus>>> = {
  pending_payment: { payment_captured: "paid", payment_failed: "cancelled", cancel: "cancelled" },
  paid: { label_printed: "shipped", cancel: "cancelled" },
  shipped: { carrier_delivered: "delivered" },
  delivered: {},
  cancelled: {},
};

export class TransitionError extends Error {
  constructor(public from: OrderStatus, public event: OrderEvent) {
    super(`cannot ${event} an order that is ${from}`);
  }
}

export function transition(from: OrderStatus, event: OrderEvent): OrderStatus {
  const to = NEXT[from][event];
  if (!to) throw new TransitionError(from, event);
  return to;
}

/** Shipped and delivered orders can no longer be cancelled; refunds go through returns. */
export function isCancellable(status: OrderStatus): boolean {
  return NEXT[status].cancel !== undefined;
}
