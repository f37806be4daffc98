import { findCampaign } from "../campaigns.js";
import { PriceList, PricedQuote, PricingError, QuoteRequest } from "../types.js";

// Pricing engine v2: tax per line, reductions applied after tax.
export function priceQuoteV2(req: QuoteRequest, prices: PriceList): PricedQuote {
  let subtotal = 0;
  let tax = 0;
  for (const line of req.items) {
    const unit = prices.unitPrice(line.sku, req.currency);
    if (unit === undefined) throw new PricingError("UNKNOWN_SKU", `unknown sku ${line.sku}`);
    const lineNet = unit * line.quantity;
    subtotal += lineNet;
    tax += Math.round(lineNet * prices.taxRate);
  }
  const gross = subtotal + tax;

  // `discount` is a fixed reduction in minor units of the quote currency, taken off the
  // gross total; it may not exceed the gross total.
  const fixed = Math.trunc(req.discount ?? 0);
  if (fixed < 0 || fixed > gross) {
    throw new PricingError("INVALID_DISCOUNT", "discount must be between 0 and the gross total");
  }
  let reduction = fixed;

  if (req.discount_code) {
    const campaign = findCampaign(req.discount_code);
    if (!campaign) throw new PricingError("INVALID_DISCOUNT", "inactive discount code");
    reduction += campaign.discount.kind === "fixed"
      ? campaign.discount.value
      : Math.round((gross * campaign.discount.value) / 100);
  }

  return { subtotal, reduction, tax, total: Math.max(0, gross - reduction) };
}
