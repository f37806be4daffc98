import request from "supertest";
import { app } from "../src/app.js";
import { seedShipment, stubCarrier } from "./helpers.js";

describe("GET /shipments/:id", () => {
  it("returns 404 for an unknown shipment", async () => {
    const res = await request(app).get("/shipments/shp_missing");
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("SHIPMENT_NOT_FOUND");
  });

  it("reports the carrier status", async () => {
    const id = await seedShipment({ carrier: "dhl", serviceLevel: "standard" });
    stubCarrier("dhl", { status: "in_transit" });
    const res = await request(app).get(`/shipments/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("in_transit");
    expect(res.body.tracking_number).toMatch(/^JD\d+/);
  });

  it("asks the client to come back when the carrier is down", async () => {
    const id = await seedShipment({ carrier: "ups", serviceLevel: "express" });
    stubCarrier("ups", new Error("down"));
    const res = await request(app).get(`/shipments/${id}`);
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("30");
  });
});
