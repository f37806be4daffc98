// Payment records as returned by the payment service. `status` here belongs to the payment,
// not the order: an order can be cancelled while its payment is refunded later.
export type PaymentStatus = "authorized" | "captured" | "refunded" | "voided";

export interface Payment {
  id: string;
  status: PaymentStatus;
  amountMinor: number;
}
