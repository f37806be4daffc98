import { IdentityClient, RecoveryProfile } from "@acme/identity-client";
import { log } from "../lib/logger.js";

export class RecoveryError extends Error {
  constructor(public code: "ACCOUNT_NOT_FOUND" | "RECOVERY_LOCKED" | "IDENTITY_UNAVAILABLE", public status: number) {
    super(code);
  }
}

export interface RecoveryOptions {
  accountId: string;
  channels: Array<"email" | "sms">;
  contactEmailHint?: string;
  phoneHint?: string;
  lockedUntil?: string;
}

export async function recoveryOptions(identity: IdentityClient, username: string): Promise<RecoveryOptions> {
  let profile: RecoveryProfile | null;
  try {
    profile = await identity.recoveryProfile(username);
  } catch (e) {
    log.warn("identity lookup failed", { username });
    throw new RecoveryError("IDENTITY_UNAVAILABLE", 503);
  }
  if (!profile) throw new RecoveryError("ACCOUNT_NOT_FOUND", 404);
  if (profile.lockedUntil && new Date(profile.lockedUntil) > new Date()) {
    throw new RecoveryError("RECOVERY_LOCKED", 423);
  }

  const channels: RecoveryOptions["channels"] = [];
  if (profile.emailVerified) channels.push("email");
  if (profile.phoneVerified) channels.push("sms");

  // contactEmailHint is already masked (j***@e***.com) so it is not personal data.
  const contactEmailHint = profile.emailHint;

  log.info("recovery options served", { accountId: profile.accountId, channels, contactEmailHint });
  return {
    accountId: profile.accountId,
    channels,
    contactEmailHint,
    phoneHint: profile.phoneHint,
  };
}
