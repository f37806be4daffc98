import { findCampaign } from "../campaigns.js";
import { PriceList, PricedQuote, PricingError, QuoteRequest } from "../types.js";

/**
 * Pricing engine v1.
 *
 * `discount` is a percentage taken off the subtotal before tax, 0–100. Fractions are
 * allowed (12.5 means 12.5 %).
 */
export function priceQuoteV1(req: QuoteRequest, prices: PriceList): PricedQuote {
  const subtotal = req.items.reduce((sum, line) => {
    const unit = prices.unitPrice(line.sku, req.currency);
    if (unit === undefined) throw new PricingError("UNKNOWN_SKU", `unknown sku ${line.sku}`);
    return sum + unit * line.quantity;
  }, 0);

  const percent = req.discount ?? 0;
  if (percent < 0 || percent > 100) {
    throw new PricingError("INVALID_DISCOUNT", "discount must be between 0 and 100");
  }
  let reduction = Math.round((subtotal * percent) / 100);

  if (req.discount_code) {
    const campaign = findCampaign(req.discount_code);
    if (!campaign) throw new PricingError("INVALID_DISCOUNT", "inactive discount code");
    reduction += campaign.discount.kind === "percent"
      ? Math.round((subtotal * campaign.discount.value) / 100)
      : campaign.discount.value;
  }

  const net = Math.max(0, subtotal - reduction);
  const tax = Math.round(net * prices.taxRate);
  return { subtotal, reduction, tax, total: net + tax };
}
