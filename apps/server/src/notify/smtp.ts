/** The SMTP server of notification e-mails, from TERN_SMTP_URL and TERN_SMTP_FROM (null: e-mail is skipped with a reason). */
import { parseSmtpUrl, type ServerConfig } from "../config.ts";
import type { SmtpSettings } from "./delivery/index.ts";

export function smtpSettings(config: ServerConfig): SmtpSettings | null {
  if (!config.TERN_SMTP_URL) return null;
  const parsed = parseSmtpUrl(config.TERN_SMTP_URL);
  return parsed ? { ...parsed, from: config.TERN_SMTP_FROM } : null;
}
