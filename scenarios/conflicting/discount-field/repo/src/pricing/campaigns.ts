// Campaign codes. A campaign carries its own discount, independent of the request's
// `discount` field; both can apply to one quote.
export interface Campaign {
  code: string;
  discount: { kind: "percent" | "fixed"; value: number };
  endsAt: Date;
}

const ACTIVE: Campaign[] = [
  { code: "SPRING10", discount: { kind: "percent", value: 10 }, endsAt: new Date("2026-05-31") },
  { code: "WELCOME5", discount: { kind: "fixed", value: 500 }, endsAt: new Date("2026-12-31") },
];

export function findCampaign(code: string, now = new Date()): Campaign | undefined {
  return ACTIVE.find((c) => c.code === code.toUpperCase() && c.endsAt > now);
}
