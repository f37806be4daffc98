import { describe, expect, it } from "vitest";
import { createRefund, RefundError, Charge } from "./service";

function storeWith(charge: Charge) {
  const refunds: number[] = [];
  return {
    refunds,
    find: async (id: string) => (id === charge.id ? charge : undefined),
    addRefund: async (_: string, amount: number) => void refunds.push(amount),
  };
}

const charge: Charge = { id: "ch_1", currency: "EUR", capturedAmount: 5000, refundedAmount: 1000 };

describe("createRefund", () => {
  it("refunds the remainder when no amount is given", async () => {
    const store = storeWith(charge);
    const refund = await createRefund(store, { chargeId: "ch_1" }, () => "re_1");
    expect(refund.amount).toBe(4000);
  });

  it("rejects more than what is left", async () => {
    const store = storeWith(charge);
    await expect(createRefund(store, { chargeId: "ch_1", amount: 4001 }, () => "re_2")).rejects.toBeInstanceOf(RefundError);
  });

  it("rejects fractional amounts", async () => {
    const store = storeWith(charge);
    await expect(createRefund(store, { chargeId: "ch_1", amount: 12.5 }, () => "re_3")).rejects.toThrow("whole number");
  });

  it("renders the receipt line", async () => {
    const store = storeWith(charge);
    const refund = await createRefund(store, { chargeId: "ch_1", amount: 1999 }, () => "re_4");
    expect(refund.receiptLine).toBe("Refund 19.99 EUR");
  });
});
