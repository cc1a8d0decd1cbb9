/** One e-mail attempt over SMTP with nodemailer, classified for the retry loop. */
import nodemailer, { type Transporter } from "nodemailer";
import type { EmailContent } from "./email-content.ts";
import type { AttemptOutcome, SmtpSettings } from "./types.ts";

/** Connection failures worth another try; authentication and protocol errors are configuration problems. */
const TRANSIENT_CODES = new Set(["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS", "ECONNREFUSED", "ECONNRESET", "EPIPE"]);

export class SmtpSender {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(settings: SmtpSettings) {
    const timeout = settings.timeoutMs ?? 15_000;
    this.#from = settings.from;
    this.#transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      requireTLS: settings.requireTLS ?? false,
      auth: settings.auth,
      tls: { rejectUnauthorized: settings.rejectUnauthorized ?? true },
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
  }

  async send(recipients: readonly string[], content: EmailContent, messageId: string): Promise<AttemptOutcome> {
    try {
      const info = await this.#transport.sendMail({
        from: this.#from,
        to: [...recipients],
        subject: content.subject,
        text: content.text,
        html: content.html,
        // The same id on every retry lets mail systems drop a duplicate of a message that did arrive.
        messageId,
      });
      const rejected = (info.rejected ?? []).map(String);
      return {
        ok: true,
        responseCode: smtpCode(info.response),
        note: rejected.length ? `rejected: ${rejected.join(", ")}` : undefined,
      };
    } catch (err) {
      const e = err as Error & { code?: string; responseCode?: number; response?: string };
      const code = e.responseCode ?? null;
      // SMTP 4xx replies are temporary by definition (RFC 5321); 5xx are permanent.
      const retryable = code !== null ? code >= 400 && code < 500 : TRANSIENT_CODES.has(e.code ?? "");
      return { ok: false, retryable, responseCode: code, error: e.response ?? `${e.code ? `${e.code}: ` : ""}${e.message}` };
    }
  }

  close(): void {
    this.#transport.close();
  }
}

function smtpCode(response: string | undefined): number | null {
  const m = /^(\d{3})/.exec(response ?? "");
  return m ? Number(m[1]) : null;
}
