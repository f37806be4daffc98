import type { FastifyInstance } from "fastify";
import bcrypt from "bcryptjs";
import signupSchema from "../../schemas/signup.schema.json" assert { type: "json" };
import { config } from "../config.js";
import { logger } from "../lib/logger.js";
import { accounts, RateLimiter } from "../store.js";

interface SignupBody {
  email: string;
  password: string;
  display_name?: string;
  marketing_opt_in?: boolean;
  referral_code?: string;
}

const limiter = new RateLimiter(config.signupRateLimitPerHour);

export async function signupRoutes(app: FastifyInstance) {
  app.post<{ Body: SignupBody }>("/signup", { schema: { body: signupSchema } }, async (req, reply) => {
    if (!limiter.allow(req.ip)) {
      return reply.code(429).send({ code: "RATE_LIMITED" });
    }
    const email = req.body.email.trim().toLowerCase();
    if (await accounts.existsByEmail(email)) {
      logger.info({ email }, "signup rejected: address in use");
      return reply.code(409).send({ code: "EMAIL_TAKEN" });
    }
    if (req.body.password.length < 12) {
      return reply.code(422).send({ code: "WEAK_PASSWORD" });
    }
    const hash = await bcrypt.hash(req.body.password, config.bcryptRounds);
    const account = await accounts.create({
      email,
      passwordHash: hash,
      displayName: req.body.display_name,
      marketingOptIn: req.body.marketing_opt_in ?? false,
      referralCode: req.body.referral_code,
    });
    logger.info({ accountId: account.id, email }, "account created");
    return reply.code(201).send({ account_id: account.id, email_verification_required: true });
  });
}
