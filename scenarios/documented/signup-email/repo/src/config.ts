export const config = {
  // Shown in the footer of every transactional mail; a shared team mailbox.
  supportEmail: process.env.SUPPORT_EMAIL ?? "help@tallyho.app",
  bcryptRounds: Number(process.env.BCRYPT_ROUNDS ?? 12),
  signupRateLimitPerHour: 20,
};
