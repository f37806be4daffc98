import pino from "pino";

// Secrets and personal data never reach the log index. Everything else in a request or
// response is logged as-is; usage numbers are logged on purpose for cost dashboards.
export const logger = pino({
  redact: {
    paths: [
      "req.headers.authorization",
      "req.body.text",
      "res.body.summary",
      "*.access_token",
      "*.refresh_token",
    ],
    censor: "[redacted]",
  },
});
