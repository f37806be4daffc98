import { Router } from "express";

import { sendError, sendPage } from "../http/respond.js";
import type { WebhookEvent } from "./events.js";

export interface EventStore {
  get(id: string): Promise<WebhookEvent | undefined>;
  list(after?: string, limit?: number): Promise<{ rows: WebhookEvent[]; next?: string }>;
}

export function eventsRouter(store: EventStore): Router {
  const router = Router();

  // Single events are returned bare, exactly as delivered (no envelope).
  router.get("/events/:eventId", async (req, res) => {
    const event = await store.get(req.params.eventId);
    if (!event) return sendError(res, 404, "EVENT_NOT_FOUND", "No event with this id, or it is older than 30 days.");
    res.json(event);
  });

  router.get("/events", async (req, res) => {
    const { rows, next } = await store.list(req.query.after as string | undefined, 50);
    sendPage(res, rows, next);
  });

  return router;
}
