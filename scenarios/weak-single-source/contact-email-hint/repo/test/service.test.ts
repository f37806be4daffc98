import { test } from "node:test";
import assert from "node:assert/strict";
import { recoveryOptions, RecoveryError } from "../src/recovery/service.js";

function identityWith(profile: any) {
  return { recoveryProfile: async () => profile } as any;
}

test("offers only verified channels", async () => {
  const o = await recoveryOptions(identityWith({
    accountId: "acc_9", emailVerified: true, phoneVerified: false, emailHint: "HINT", phoneHint: "PHINT",
  }), "jdoe");
  assert.deepEqual(o.channels, ["email"]);
  assert.equal(o.contactEmailHint, "HINT");
});

test("unknown account", async () => {
  await assert.rejects(recoveryOptions(identityWith(null), "nobody"), (e: RecoveryError) => e.code === "ACCOUNT_NOT_FOUND");
});

test("locked account", async () => {
  const future = new Date(Date.now() + 60_000).toISOString();
  await assert.rejects(
    recoveryOptions(identityWith({ accountId: "acc_9", lockedUntil: future }), "jdoe"),
    (e: RecoveryError) => e.status === 423,
  );
});
