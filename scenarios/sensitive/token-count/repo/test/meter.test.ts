import { describe, expect, it } from "vitest";

import { billedTokens, countTokens } from "../src/usage/meter.js";

describe("usage", () => {
  it("counts tokens, not characters", () => {
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("")).toBe(0);
  });

  it("bills prompt and completion tokens together", () => {
    expect(billedTokens({ prompt: 1200, completion: 80 })).toBe(1280);
  });
});

describe("context limit", () => {
  it("is expressed in tokens", () => {
    const long = "lorem ".repeat(130_000);
    expect(countTokens(long)).toBeGreaterThan(128_000);
  });
});
