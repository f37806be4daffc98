import { Router } from "express";
import { z } from "zod";
import { createRefund, RefundError, ChargeStore } from "../refunds/service";

const body = z.object({
  amount: z.number().int().positive().optional(),
  reason: z.enum(["duplicate", "fraudulent", "requested_by_customer"]).optional(),
});

const STATUS: Record<RefundError["code"], number> = {
  CHARGE_NOT_FOUND: 404,
  REFUND_EXCEEDS_CHARGE: 422,
  CHARGE_NOT_CAPTURED: 409,
};

export function refundRoutes(store: ChargeStore, newId: () => string): Router {
  const r = Router();
  r.post("/charges/:chargeId/refunds", async (req, res) => {
    const parsed = body.safeParse(req.body);
    if (!parsed.success) return res.status(400).json({ code: "INVALID_REQUEST", issues: parsed.error.issues });
    try {
      const refund = await createRefund(store, { chargeId: req.params.chargeId, ...parsed.data }, newId);
      res.status(201).json({
        refund_id: refund.id,
        amount: refund.amount,
        currency: refund.currency,
        status: refund.status,
      });
    } catch (e) {
      if (e instanceof RefundError) return res.status(STATUS[e.code]).json({ code: e.code, message: e.message });
      throw e;
    }
  });
  return r;
}
