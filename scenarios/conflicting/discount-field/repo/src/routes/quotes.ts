import { Router } from "express";
import { randomUUID } from "node:crypto";

import { priceQuoteV1 } from "../pricing/v1/quote.js";
import { priceQuoteV2 } from "../pricing/v2/quote.js";
import { PriceList, PricingError, QuoteRequest } from "../pricing/types.js";

export function quotesRouter(loadPrices: (customerId: string) => Promise<PriceList>): Router {
  const router = Router();

  router.post("/quotes", async (req, res) => {
    const body = req.body as QuoteRequest;
    let prices: PriceList;
    try {
      prices = await loadPrices(body.customer_id);
    } catch {
      return res.status(503).json({ code: "PRICING_UNAVAILABLE", message: "The price list could not be loaded." });
    }
    const engine = req.header("Quotes-Version") === "2" ? priceQuoteV2 : priceQuoteV1;
    try {
      const priced = engine(body, prices);
      return res.status(201).json({ quote_id: `q_${randomUUID()}`, total: priced.total });
    } catch (err) {
      if (err instanceof PricingError) {
        const status = err.code === "UNKNOWN_SKU" ? 404 : 422;
        return res.status(status).json({ code: err.code, message: err.message });
      }
      throw err;
    }
  });

  return router;
}
