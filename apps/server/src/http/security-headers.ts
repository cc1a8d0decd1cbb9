/**
 * Security headers on every answer (Hono's secure-headers) and CORS only for
 * the origins an operator allows. One strict Content-Security-Policy serves
 * the HTML pages (the API docs) and, as defence in depth, every JSON answer:
 * scripts and styles from this origin only, no inline script, no framing.
 */
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";

export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

export function securityHeaders(): MiddlewareHandler {
  const secure = secureHeaders({
    contentSecurityPolicy: CONTENT_SECURITY_POLICY,
    xFrameOptions: "DENY",
    // Answers of an API are for their caller only.
    crossOriginResourcePolicy: "same-origin",
    referrerPolicy: "no-referrer",
  });
  // A handler may answer with a stricter policy of its own (the branding logo: nothing may run in it).
  return async (c, next) => {
    let own: string | null = null;
    await secure(c, async () => {
      await next();
      own = c.res.headers.get("content-security-policy");
    });
    if (own) c.res.headers.set("content-security-policy", own);
  };
}

/** CORS for the allowed origins only; with none configured no CORS header is ever sent. */
export function corsFor(origins: readonly string[]): MiddlewareHandler | null {
  if (origins.length === 0) return null;
  return cors({
    origin: [...origins],
    allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type"],
    exposeHeaders: [
      "records-total",
      "Location",
      "Retry-After",
      "RateLimit-Policy",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
    ],
    maxAge: 600,
  });
}
