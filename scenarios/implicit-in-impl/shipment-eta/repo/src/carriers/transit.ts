export type ServiceLevel = "economy" | "standard" | "express";

/** Business days a parcel spends in the network after dispatch, per service level. */
export const TRANSIT_DAYS: Record<ServiceLevel, number> = {
  economy: 5,
  standard: 3,
  express: 1,
};

export interface CarrierTracking {
  status: "label_created" | "in_transit" | "out_for_delivery" | "delivered" | "exception";
  /** The carrier's own delivery promise, when it publishes one (YYYY-MM-DD). */
  promisedDate?: string;
  deliveredAt?: string;
}
