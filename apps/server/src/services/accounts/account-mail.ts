/**
 * E-mails of the account flows (password reset, invitation), sent once over
 * the notification SMTP server (TERN_SMTP_URL). Their tokens are in the text
 * and nowhere else: the server keeps only hashes.
 */
import { randomUUID } from "node:crypto";
import type { ServerConfig } from "../../config.ts";
import { ApiError } from "../../http/errors.ts";
import { SmtpSender } from "../../notify/delivery/email.ts";
import { escapeHtml } from "../../notify/delivery/email-content.ts";
import { smtpSettings } from "../../notify/smtp.ts";

export interface AccountMail {
  subject: string;
  /** Paragraphs of plain text; `code` is shown on a line of its own. */
  paragraphs: string[];
  code?: string;
}

export const emailUnavailable = (why: string) => new ApiError("EMAIL_UNAVAILABLE", `cannot send e-mail: ${why}`);

/** True when the server has an SMTP server to send account e-mails through. */
export function canSendMail(config: ServerConfig): boolean {
  return smtpSettings(config) !== null;
}

/** Sends one e-mail to `to`; throws EMAIL_UNAVAILABLE when SMTP is not configured or the server refuses it. */
export async function sendAccountMail(config: ServerConfig, to: string, mail: AccountMail): Promise<void> {
  const settings = smtpSettings(config);
  if (!settings) throw emailUnavailable("TERN_SMTP_URL is not set");
  const lines = [...mail.paragraphs.flatMap((p) => [p, ""]), ...(mail.code ? [mail.code, ""] : [])];
  const html = `<!doctype html><html><body style="font-family:sans-serif">${mail.paragraphs
    .map((p) => `<p>${escapeHtml(p)}</p>`)
    .join("")}${mail.code ? `<pre>${escapeHtml(mail.code)}</pre>` : ""}</body></html>`;
  const sender = new SmtpSender(settings);
  try {
    const outcome = await sender.send([to], { subject: mail.subject, text: lines.join("\n"), html }, `<${randomUUID()}@tern>`);
    if (!outcome.ok) throw emailUnavailable(outcome.error ?? "the SMTP server refused the message");
  } finally {
    sender.close();
  }
}

/**
 * Where an e-mail's instructions send the reader: TERN_PUBLIC_URL's API, or
 * the bare path when it is unset. Never the request's Host header: anyone can
 * forge that and would receive the token of a reset they asked for someone else.
 */
export function apiAddress(config: ServerConfig, path: string): string {
  return `${config.TERN_PUBLIC_URL ?? ""}/api${path}`;
}
