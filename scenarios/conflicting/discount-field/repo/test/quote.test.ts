import { describe, expect, it } from "vitest";

import { priceQuoteV1 } from "../src/pricing/v1/quote.js";
import { priceQuoteV2 } from "../src/pricing/v2/quote.js";
import { PriceList } from "../src/pricing/types.js";

const prices: PriceList = {
  unitPrice: (sku) => ({ "SKU-1": 1000, "SKU-2": 250 } as Record<string, number>)[sku],
  taxRate: 0.2,
};

describe("engines agree without reductions", () => {
  it("prices the same basket to the same total", () => {
    const req = { customer_id: "c_1", currency: "EUR", items: [{ sku: "SKU-1", quantity: 2 }] };
    expect(priceQuoteV1(req, prices).total).toBe(2400);
    expect(priceQuoteV2(req, prices).total).toBe(2400);
  });
});

describe("campaign codes", () => {
  it("rejects an unknown code", () => {
    const req = { customer_id: "c_1", currency: "EUR", items: [{ sku: "SKU-2", quantity: 1 }], discount_code: "NOPE" };
    expect(() => priceQuoteV1(req, prices)).toThrow(/inactive discount code/);
    expect(() => priceQuoteV2(req, prices)).toThrow(/inactive discount code/);
  });
});
