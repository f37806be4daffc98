import { describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";

describe("POST /signup", () => {
  it("creates an account and asks for verification", async () => {
    const app = await buildApp();
    const res = await app.inject({
      method: "POST",
      url: "/signup",
      payload: { email: "Ada@Example.com", password: "correct horse battery" },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().email_verification_required).toBe(true);
  });

  it("rejects an address already in use", async () => {
    const app = await buildApp();
    const body = { email: "ada@example.com", password: "correct horse battery" };
    await app.inject({ method: "POST", url: "/signup", payload: body });
    const res = await app.inject({ method: "POST", url: "/signup", payload: body });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe("EMAIL_TAKEN");
  });
});
