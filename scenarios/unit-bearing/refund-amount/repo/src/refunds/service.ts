import { formatMinor } from "../money";

export interface Charge {
  id: string;
  currency: string;
  capturedAmount: number;
  refundedAmount: number;
}

export interface RefundRequest {
  chargeId: string;
  amount?: number;
  reason?: "duplicate" | "fraudulent" | "requested_by_customer";
}

export interface Refund {
  id: string;
  chargeId: string;
  amount: number;
  currency: string;
  status: "pending" | "succeeded";
  receiptLine: string;
}

export class RefundError extends Error {
  constructor(public code: "CHARGE_NOT_FOUND" | "REFUND_EXCEEDS_CHARGE" | "CHARGE_NOT_CAPTURED", message: string) {
    super(message);
  }
}

export interface ChargeStore {
  find(id: string): Promise<Charge | undefined>;
  addRefund(chargeId: string, amount: number): Promise<void>;
}

export async function createRefund(store: ChargeStore, req: RefundRequest, newId: () => string): Promise<Refund> {
  const charge = await store.find(req.chargeId);
  if (!charge) throw new RefundError("CHARGE_NOT_FOUND", `no charge ${req.chargeId}`);
  if (charge.capturedAmount === 0) throw new RefundError("CHARGE_NOT_CAPTURED", "charge was never captured");

  const remaining = charge.capturedAmount - charge.refundedAmount;
  const amount = req.amount ?? remaining;
  if (!Number.isInteger(amount) || amount <= 0) {
    throw new RefundError("REFUND_EXCEEDS_CHARGE", "amount must be a positive whole number");
  }
  if (amount > remaining) {
    throw new RefundError("REFUND_EXCEEDS_CHARGE", `at most ${formatMinor(remaining, charge.currency)} can be refunded`);
  }
  await store.addRefund(charge.id, amount);
  return {
    id: newId(),
    chargeId: charge.id,
    amount,
    currency: charge.currency,
    status: "pending",
    receiptLine: `Refund ${formatMinor(amount, charge.currency)}`,
  };
}

/** @deprecated v2 partner endpoint; unused since the 3.x routes. Took a decimal dollar figure. */
export function legacyRefundAmount(dollars: number): number {
  return Math.round(dollars * 100);
}
