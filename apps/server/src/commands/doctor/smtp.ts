/** The SMTP server of notification e-mails, if configured: reachable, and it accepts the login. */
import nodemailer from "nodemailer";
import type { ServerConfig } from "../../config.ts";
import { smtpSettings } from "../../notify/smtp.ts";
import { type CheckResult, fail, ok } from "./check.ts";

export async function checkSmtp(config: ServerConfig): Promise<CheckResult | null> {
  const s = smtpSettings(config);
  if (!s) return null;
  const where = `${s.host}:${s.port}`;
  const transport = nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.secure,
    requireTLS: s.requireTLS,
    auth: s.auth,
    tls: { rejectUnauthorized: s.rejectUnauthorized },
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 10_000,
  });
  try {
    await transport.verify();
    return ok("smtp", `${where} accepts connections${s.auth ? " and the login" : ""}`);
  } catch (err) {
    const e = err as Error & { code?: string };
    return fail(
      "smtp",
      `${where}: ${e.code ? `${e.code} ` : ""}${e.message}`,
      "check TERN_SMTP_URL (host, port, user, password, TLS) and the firewall",
    );
  } finally {
    transport.close();
  }
}
