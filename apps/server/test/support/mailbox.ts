/** A real SMTP server for account e-mails in tests, with waiting for a message to an address and reading its token. */
import { SmtpReceiver } from "../delivery/smtp-receiver.ts";

export interface Mailbox {
  receiver: SmtpReceiver;
  /** TERN_SMTP_URL of the receiver. */
  url: string;
  /** The messages received so far for `to`. */
  to(to: string): string[];
  /** Waits for the n-th message (1-based) to `to` and returns its text. */
  waitFor(to: string, n?: number, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const receiver = new SmtpReceiver();
  const port = await receiver.start();
  const to = (address: string) => receiver.received.filter((m) => m.envelopeTo.includes(address)).map((m) => m.mail.text ?? "");
  return {
    receiver,
    url: `smtp://127.0.0.1:${port}`,
    to,
    async waitFor(address, n = 1, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        const got = to(address);
        if (got.length >= n) return got[n - 1]!;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no e-mail #${n} to ${address} within ${timeoutMs} ms`);
    },
    stop: () => receiver.stop(),
  };
}

/** The account token (`tern_pwr_…`, `tern_inv_…`, `tern_sup_…`) in an e-mail's text. */
export function tokenIn(text: string): string {
  const m = /\b(tern_(?:pwr|inv|sup)_[A-Za-z0-9_-]{43})\b/.exec(text);
  if (!m) throw new Error(`no token in e-mail:\n${text}`);
  return m[1]!;
}
