import { Router } from "express";
import { OrderRepository } from "./repository";
import { isCancellable, transition } from "./lifecycle";

export function orderRoutes(repo: OrderRepository): Router {
  const r = Router();

  r.get("/orders/:orderId", async (req, res) => {
    const o = await repo.get(req.params.orderId);
    if (!o) return res.status(404).json({ code: "ORDER_NOT_FOUND" });
    res.json({
      order_id: o.id,
      order_status: o.orderStatus,
      cancellable: isCancellable(o.orderStatus),
      total_minor: o.totalMinor,
      currency: o.currency,
      placed_at: o.placedAt,
    });
  });

  r.post("/orders/:orderId/cancel", async (req, res) => {
    const o = await repo.get(req.params.orderId);
    if (!o) return res.status(404).json({ code: "ORDER_NOT_FOUND" });
    if (!isCancellable(o.orderStatus)) return res.status(409).json({ code: "ORDER_NOT_CANCELLABLE" });
    await repo.update(o.id, { orderStatus: transition(o.orderStatus, "cancel") });
    res.status(204).end();
  });

  return r;
}
