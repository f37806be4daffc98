import { Hono } from "hono";
import { ApiError, toBody } from "./errors.js";
import { DocumentWriter, WriteRequest } from "../documents/writer.js";

export function documentRoutes(writer: DocumentWriter) {
  const app = new Hono();
  app.put("/documents/:id/content", async (c) => {
    try {
      const body = await c.req.json<WriteRequest>();
      return c.json(await writer.write(c.req.param("id"), body));
    } catch (e) {
      if (e instanceof ApiError) return c.json(toBody(e), e.status as 409);
      throw e;
    }
  });
  return app;
}
