import { randomUUID } from "node:crypto";

import type { CreditNote, Invoice } from "../invoices/model.js";

export type EventType =
  | "invoice.created"
  | "invoice.finalized"
  | "invoice.paid"
  | "invoice.voided"
  | "credit_note.created";

type Resource = Invoice | CreditNote;

export interface WebhookEvent {
  id: string;
  type: EventType;
  created_at: string;
  data: Resource;
  previous_attributes?: Partial<Resource>;
}

/**
 * Builds the event for a change to `resource`. The resource is deep-copied at this point so
 * that the stored event keeps the object exactly as it was right after the change, even if
 * the invoice is modified again before the event is delivered or fetched.
 */
export function buildEvent(
  type: EventType,
  resource: Resource,
  before?: Partial<Resource>,
): WebhookEvent {
  const event: WebhookEvent = {
    id: `evt_${randomUUID().replace(/-/g, "")}`,
    type,
    created_at: new Date().toISOString(),
    data: structuredClone(resource),
  };
  if (before && type.endsWith(".updated")) {
    event.previous_attributes = before;
  }
  return event;
}
