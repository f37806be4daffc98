import pino from "pino";

// Keys masked before a log line leaves the process (pii and secret classes).
export const REDACTED_KEYS = ["email", "display_name", "password", "*.email", "*.password"];

export const logger = pino({
  level: process.env.LOG_LEVEL ?? "info",
  redact: { paths: REDACTED_KEYS, censor: "[redacted]" },
});
