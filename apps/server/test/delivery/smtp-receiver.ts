/** A real SMTP server (the smtp-server package) on 127.0.0.1 that parses what it receives with mailparser. */
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

export interface ReceivedMail {
  envelopeTo: string[];
  mail: ParsedMail;
}

export class SmtpReceiver {
  readonly received: ReceivedMail[] = [];
  readonly #server: SMTPServer;
  /** Per RCPT TO: return an SMTP error code and message to refuse that recipient, or null to accept. */
  rcptPolicy: (address: string, attempt: number) => { code: number; message: string } | null = () => null;
  #rcptCount = new Map<string, number>();

  constructor(options: Partial<SMTPServerOptions> = {}) {
    this.#server = new SMTPServer({
      authOptional: true,
      disabledCommands: options.secure ? [] : ["STARTTLS"],
      logger: false,
      ...options,
      onRcptTo: (address, _session, callback) => {
        const n = (this.#rcptCount.get(address.address) ?? 0) + 1;
        this.#rcptCount.set(address.address, n);
        const refusal = this.rcptPolicy(address.address, n);
        if (!refusal) return callback();
        callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
      },
      onData: (stream, session, callback) => {
        simpleParser(stream)
          .then((mail) => {
            this.received.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address), mail });
            callback();
          })
          .catch(callback);
      },
    });
    this.#server.on("error", () => {});
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return ((this.#server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
