export type InvoiceStatus = "draft" | "open" | "paid" | "void";

export interface Invoice {
  id: string;
  customer_id: string;
  status: InvoiceStatus;
  currency: string;
  amount_due: number; // minor units
  amount_paid: number; // minor units
  lines: { description: string; amount: number }[];
  updated_at: string;
}

export interface CreditNote {
  id: string;
  invoice_id: string;
  amount: number; // minor units
  reason: "duplicate" | "fraudulent" | "order_change" | "product_unsatisfactory";
}
