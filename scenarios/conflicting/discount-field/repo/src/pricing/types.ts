export interface QuoteLine {
  sku: string;
  quantity: number;
}

export interface QuoteRequest {
  customer_id: string;
  items: QuoteLine[];
  currency: string;
  discount?: number;
  discount_code?: string;
}

export interface PricedQuote {
  subtotal: number; // minor units
  reduction: number; // minor units
  tax: number; // minor units
  total: number; // minor units
}

export interface PriceList {
  unitPrice(sku: string, currency: string): number | undefined; // minor units
  taxRate: number; // 0.2 for 20 %
}

export class PricingError extends Error {
  constructor(public code: "UNKNOWN_SKU" | "INVALID_DISCOUNT", message: string) {
    super(message);
  }
}
