import type { FastifyInstance } from "fastify";
import { IdentityClient } from "@acme/identity-client";
import { recoveryOptions, RecoveryError } from "./service.js";

export async function recoveryRoutes(app: FastifyInstance, identity: IdentityClient) {
  app.get<{ Querystring: { username: string } }>("/recovery/options", async (req, reply) => {
    try {
      const o = await recoveryOptions(identity, req.query.username);
      return {
        account_id: o.accountId,
        channels: o.channels,
        contact_email_hint: o.contactEmailHint ?? null,
        phone_hint: o.phoneHint ?? null,
      };
    } catch (e) {
      if (e instanceof RecoveryError) return reply.code(e.status).send({ code: e.code });
      throw e;
    }
  });
}
