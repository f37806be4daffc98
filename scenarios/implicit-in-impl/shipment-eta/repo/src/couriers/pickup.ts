import { Router } from "express";
import { courierPool } from "./pool.js";

export const pickupRoutes = Router();

/**
 * Books a courier to collect parcels at a merchant's dock. The response's
 * `eta` is the number of minutes until the courier arrives at the dock.
 */
pickupRoutes.post("/pickups", async (req, res) => {
  const { merchant_id, dock_id, parcels } = req.body;
  const courier = await courierPool.nearest(dock_id);
  if (!courier) {
    return res.status(409).json({ code: "NO_COURIER_AVAILABLE" });
  }
  const booking = await courierPool.book(courier, { merchant_id, dock_id, parcels });
  return res.status(201).json({ pickup_id: booking.id, eta: Math.ceil(booking.driveSeconds / 60) });
});
