/** The login throttles of one instance, built from the configuration (server start and tests). */
import { createRateLimiter, type RateLimiter } from "../../auth/rate-limiter.ts";
import type { ServerConfig } from "../../config.ts";
import { createLoginBackoff, type LoginBackoff } from "./login-backoff.ts";

export interface LoginLimits {
  /** Every login attempt (and password-reset request) per client IP. */
  ip: RateLimiter;
  /** Back-off of failed passwords per address and account (login-backoff.ts). */
  backoff: LoginBackoff;
  /** Password-reset e-mails per address (a few per window: no flooding of someone's mailbox). */
  resetMail: RateLimiter;
  /** Sign-up e-mails per address (services/accounts/signup.ts), for the same reason. */
  signupMail: RateLimiter;
}

export function createLoginLimits(config: ServerConfig): LoginLimits {
  return {
    ip: createRateLimiter(config.TERN_LOGIN_RATE_IP, config.TERN_LOGIN_RATE_WINDOW),
    backoff: createLoginBackoff({
      freeFailures: config.TERN_LOGIN_RATE_USER,
      windowSeconds: config.TERN_LOGIN_RATE_WINDOW,
      baseSeconds: config.TERN_LOGIN_BACKOFF_BASE,
      maxSeconds: config.TERN_LOGIN_BACKOFF_MAX,
    }),
    resetMail: createRateLimiter(3, config.TERN_LOGIN_RATE_WINDOW),
    signupMail: createRateLimiter(3, config.TERN_LOGIN_RATE_WINDOW),
  };
}
