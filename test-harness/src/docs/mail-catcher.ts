/**
 * A local SMTP catcher for trying account e-mails (invitations, password
 * resets) on one machine: every message is written as text to
 * `<dir>/<recipient>/<n>.txt`. The docs test starts one for the server it runs
 * the walk-throughs against; a reader can start the same one:
 *   npx tsx test-harness/src/docs/mail-catcher.ts 2525 ./mail
 * and run the server with TERN_SMTP_URL=smtp://127.0.0.1:2525.
 */
import { mkdir, readdir, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface MailCatcher {
  url: string;
  stop: () => Promise<void>;
}

export async function startMailCatcher(dir: string, port = 0): Promise<MailCatcher> {
  await mkdir(dir, { recursive: true });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then(async (mail) => {
          for (const rcpt of session.envelope.rcptTo) {
            const box = join(dir, rcpt.address.toLowerCase());
            await mkdir(box, { recursive: true });
            const n = (await readdir(box)).length + 1;
            await writeFile(join(box, `${n}.txt`), `Subject: ${mail.subject ?? ""}\n\n${mail.text ?? ""}`);
          }
          callback();
        })
        .catch(callback);
    },
  });
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${bound}`, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port = "2525", dir = "./mail"] = process.argv.slice(2);
  const c = await startMailCatcher(dir, Number(port));
  console.log(`mail catcher on ${c.url}, messages in ${dir}/<recipient>/<n>.txt`);
}
