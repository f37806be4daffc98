import { createHash, timingSafeEqual } from "node:crypto";

export interface Workspace {
  id: string;
  keyHash: Buffer; // sha256 of the API key; the key itself is never stored
}

export interface OAuthSession {
  access_token: string; // short-lived bearer for the dashboard, secret
  refresh_token: string; // secret
  expires_in: number; // seconds
}

export function authenticate(header: string | undefined, workspaces: Workspace[]): Workspace | undefined {
  const key = header?.replace(/^Bearer /, "");
  if (!key) return undefined;
  const hash = createHash("sha256").update(key).digest();
  return workspaces.find((w) => w.keyHash.length === hash.length && timingSafeEqual(w.keyHash, hash));
}
