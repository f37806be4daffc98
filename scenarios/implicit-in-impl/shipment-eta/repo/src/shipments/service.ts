import { addBusinessDays, formatISO, max, parseISO } from "date-fns";
import { CarrierTracking, TRANSIT_DAYS } from "../carriers/transit.js";
import type { ShipmentRecord } from "./store.js";

export interface ShipmentView {
  id: string;
  status: CarrierTracking["status"];
  carrier: string;
  tracking_number: string;
  eta: string | null;
  delivered_at: string | null;
}

function expectedArrival(rec: ShipmentRecord, tracking: CarrierTracking): string | null {
  if (tracking.status === "delivered") return null;
  const byNetwork = addBusinessDays(parseISO(rec.dispatchedAt), TRANSIT_DAYS[rec.serviceLevel]);
  if (!tracking.promisedDate) {
    return formatISO(byNetwork, { representation: "date" });
  }
  // Carriers sometimes keep a stale promise after a delay; never show a date
  // earlier than the network could physically make.
  const latest = max([parseISO(tracking.promisedDate), byNetwork]);
  return formatISO(latest, { representation: "date" });
}

export function toView(rec: ShipmentRecord, tracking: CarrierTracking): ShipmentView {
  return {
    id: rec.id,
    status: tracking.status,
    carrier: rec.carrier,
    tracking_number: rec.trackingNumber,
    eta: expectedArrival(rec, tracking),
    delivered_at: tracking.deliveredAt ?? null,
  };
}
