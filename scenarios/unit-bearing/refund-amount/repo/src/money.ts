// Currency helpers shared by charges, refunds and invoices.

/** Minor units per major unit, by ISO 4217 code. Currencies not listed use 100. */
const EXPONENT: Record<string, number> = {
  JPY: 0,
  KRW: 0,
  BHD: 3,
  KWD: 3,
};

export function minorPerMajor(currency: string): number {
  const exp = EXPONENT[currency.toUpperCase()] ?? 2;
  return 10 ** exp;
}

/** Renders a whole-number amount for receipts, e.g. (1999, "EUR") -> "19.99 EUR". */
export function formatMinor(amount: number, currency: string): string {
  const per = minorPerMajor(currency);
  const digits = Math.log10(per);
  return `${(amount / per).toFixed(digits)} ${currency.toUpperCase()}`;
}
