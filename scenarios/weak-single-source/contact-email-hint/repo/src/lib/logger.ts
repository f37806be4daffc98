// Structured logger with key-based redaction. Keys listed here are replaced by "[redacted]"
// before a record leaves the process.
const REDACT = new Set(["contactEmail", "phoneNumber", "recoveryCode", "password"]);

export type Fields = Record<string, unknown>;

export function redact(fields: Fields): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = REDACT.has(k) ? "[redacted]" : v;
  }
  return out;
}

export const log = {
  info(msg: string, fields: Fields = {}) {
    process.stdout.write(JSON.stringify({ level: "info", msg, ...redact(fields) }) + "\n");
  },
  warn(msg: string, fields: Fields = {}) {
    process.stdout.write(JSON.stringify({ level: "warn", msg, ...redact(fields) }) + "\n");
  },
};
