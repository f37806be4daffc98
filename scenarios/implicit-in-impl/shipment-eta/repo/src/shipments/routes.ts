import { Router } from "express";
import { carrierFor, CarrierUnavailable } from "../carriers/index.js";
import { shipments } from "./store.js";
import { toView } from "./service.js";

export const shipmentRoutes = Router();

shipmentRoutes.get("/shipments/:id", async (req, res) => {
  const rec = await shipments.find(req.params.id);
  if (!rec) {
    return res.status(404).json({ code: "SHIPMENT_NOT_FOUND" });
  }
  try {
    const tracking = await carrierFor(rec.carrier).track(rec.trackingNumber);
    return res.json(toView(rec, tracking));
  } catch (e) {
    if (e instanceof CarrierUnavailable) {
      res.setHeader("Retry-After", "30");
      return res.status(503).json({ code: "CARRIER_UNREACHABLE" });
    }
    throw e;
  }
});
