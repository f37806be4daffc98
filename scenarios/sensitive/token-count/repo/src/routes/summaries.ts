import { Router } from "express";

import { authenticate, Workspace } from "../auth/keys.js";
import { logger } from "../log/logger.js";
import { billedTokens, CONTEXT_LIMIT_TOKENS, countTokens } from "../usage/meter.js";

export interface ModelGateway {
  summarise(text: string, maxSentences: number): Promise<{ summary: string; completionTokens: number }>;
}

export function summariesRouter(workspaces: Workspace[], model: ModelGateway): Router {
  const router = Router();
  router.post("/v1/summaries", async (req, res) => {
    const ws = authenticate(req.header("authorization"), workspaces);
    if (!ws) return res.status(401).json({ code: "UNAUTHENTICATED", message: "Missing or unknown API key." });
    const prompt = countTokens(req.body.text);
    if (prompt > CONTEXT_LIMIT_TOKENS) {
      return res.status(413).json({ code: "DOCUMENT_TOO_LONG", message: "The text exceeds the model context." });
    }
    try {
      const out = await model.summarise(req.body.text, req.body.max_sentences ?? 5);
      const body = { summary: out.summary, token_count: billedTokens({ prompt, completion: out.completionTokens }) };
      logger.info({ workspace: ws.id, res: { body } }, "summary created");
      return res.json(body);
    } catch {
      return res.status(529).json({ code: "MODEL_OVERLOADED", message: "The model is temporarily overloaded." });
    }
  });
  return router;
}
