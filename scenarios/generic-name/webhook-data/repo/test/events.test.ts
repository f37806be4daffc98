import { describe, expect, it } from "vitest";

import type { Invoice } from "../src/invoices/model.js";
import { buildEvent } from "../src/webhooks/events.js";

const invoice = (): Invoice => ({
  id: "in_123",
  customer_id: "cus_9",
  status: "paid",
  currency: "EUR",
  amount_due: 0,
  amount_paid: 4900,
  lines: [{ description: "Pro plan, March", amount: 4900 }],
  updated_at: "2026-03-01T10:00:00Z",
});

describe("buildEvent", () => {
  it("carries the full invoice that changed", () => {
    const event = buildEvent("invoice.paid", invoice());
    expect(event.type).toBe("invoice.paid");
    expect(event.data).toMatchObject({ id: "in_123", status: "paid", amount_paid: 4900 });
  });

  it("is not affected by later changes to the invoice", () => {
    const inv = invoice();
    const event = buildEvent("invoice.paid", inv);
    inv.status = "void";
    expect((event.data as Invoice).status).toBe("paid");
  });
});
