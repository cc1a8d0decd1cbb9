/** E-mail delivery against a real SMTP server (smtp-server on 127.0.0.1), parsed with mailparser. */
import { afterEach, describe, expect, it } from "vitest";
import { Deliverer, type DeliveryAttempt, type EmailChannel, type SmtpSettings } from "../../src/notify/delivery/index.ts";
import { notification } from "./notification.ts";
import { SmtpReceiver } from "./smtp-receiver.ts";

const FROM = '"Tern alerts" <alerts@tern.test>';
const receivers: SmtpReceiver[] = [];
const deliverers: Deliverer[] = [];
afterEach(async () => {
  await Promise.all(deliverers.splice(0).map((d) => d.close()));
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
});

async function smtp(options: ConstructorParameters<typeof SmtpReceiver>[0] = {}) {
  const receiver = new SmtpReceiver(options);
  receivers.push(receiver);
  const port = await receiver.start();
  return { receiver, settings: { host: "127.0.0.1", port, secure: false, from: FROM, timeoutMs: 5000 } satisfies SmtpSettings };
}

function deliverer(settings: SmtpSettings | null, attempts: DeliveryAttempt[] = []) {
  const d = new Deliverer({
    smtp: settings,
    log: { record: (a) => void attempts.push(a) },
    retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
  });
  deliverers.push(d);
  return d;
}

const email = (recipients: string[], fields: Partial<EmailChannel> = {}): EmailChannel => ({
  enabled: true,
  recipients,
  minSeverity: "warning",
  ...fields,
});

describe("e-mail delivery over SMTP", () => {
  it("delivers one message to every recipient with a subject, a text and an HTML body", async () => {
    const { receiver, settings } = await smtp();
    const attempts: DeliveryAttempt[] = [];
    const n = notification();
    const [result] = await deliverer(settings, attempts).deliver({
      event: "notification.raised",
      notification: n,
      channels: { email: email(["noc@example.net", "oncall@example.net"]) },
      context: { deviceName: "edge-a", organizationName: "Lab", link: "https://tern.example/notifications/1" },
    });
    expect(result).toMatchObject({
      channel: "email",
      status: "delivered",
      attempts: 1,
      target: "noc@example.net, oncall@example.net",
    });
    expect(receiver.received).toHaveLength(1);
    const { envelopeTo, mail } = receiver.received[0]!;
    expect(envelopeTo).toEqual(["noc@example.net", "oncall@example.net"]);
    expect(mail.subject).toBe("[Tern] WARNING: Tunnel default drop rate on edge-a");
    expect(mail.from?.text).toBe('"Tern alerts" <alerts@tern.test>');
    expect(mail.text).toContain("Details: tunnel 1 loss 7% (warning 5%)");
    expect(mail.text).toContain("Organization: Lab");
    expect(mail.text).toContain("Seen: 3 times");
    expect(mail.text).toContain("https://tern.example/notifications/1");
    expect(mail.html).toContain("<td>tunnel 1 loss 7% (warning 5%)</td>");
    expect(mail.html).toContain('href="https://tern.example/notifications/1"');
    expect(mail.messageId).toBe(`<${result?.deliveryId}@tern.invalid>`);
    expect(attempts).toMatchObject([{ channel: "email", attempt: 1, status: "delivered", responseCode: 250, error: null }]);
  });

  it("says when a notification is resolved, and escapes what it shows in HTML", async () => {
    const { receiver, settings } = await smtp();
    const n = notification({
      details: 'interface <script>alert("x")</script> & co',
      resolved: true,
      resolvedAt: "2026-11-21T12:05:00.000Z",
    });
    await deliverer(settings).deliver({
      event: "notification.resolved",
      notification: n,
      channels: { email: email(["noc@example.net"]) },
    });
    const { mail } = receiver.received[0]!;
    expect(mail.subject).toBe("[Tern] Resolved: Tunnel default drop rate");
    expect(mail.text).toContain("Resolved at: 2026-11-21T12:05:00.000Z");
    expect(mail.html).not.toContain("<script>");
    expect(mail.html).toContain("&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; co");
  });

  it("sends a test message", async () => {
    const { receiver, settings } = await smtp();
    await deliverer(settings).deliver({ event: "test", notification: null, channels: { email: email(["noc@example.net"]) } });
    expect(receiver.received[0]?.mail.subject).toBe("[Tern] Test message");
  });

  it("authenticates with the configured credentials, and does not retry a refused login", async () => {
    const { receiver, settings } = await smtp({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth: (auth, _session, callback) =>
        auth.username === "tern" && auth.password === "s3cret-pass"
          ? callback(null, { user: auth.username })
          : callback(new Error("Invalid username or password")),
    });
    const good = await deliverer({ ...settings, auth: { user: "tern", pass: "s3cret-pass" } }).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(good[0]?.status).toBe("delivered");
    const bad = await deliverer({ ...settings, auth: { user: "tern", pass: "wrong" } }).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(bad[0]).toMatchObject({ status: "failed", attempts: 1 });
    expect(bad[0]?.error).toMatch(/535/);
    expect(receiver.received).toHaveLength(1);
  });

  it("speaks implicit TLS (secure: true), verifying the certificate unless told not to", async () => {
    // smtp-server's built-in certificate is self-signed.
    const { receiver, settings } = await smtp({ secure: true });
    const tls = { ...settings, secure: true };
    const accepted = await deliverer({ ...tls, rejectUnauthorized: false }).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(accepted[0]?.status).toBe("delivered");
    expect(receiver.received).toHaveLength(1);
    const refused = await deliverer(tls).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(refused[0]?.status).toBe("failed");
    expect(refused[0]?.error).toMatch(/certificate/i);
    expect(receiver.received).toHaveLength(1);
  });

  it("retries a temporary (4xx) refusal and then delivers", async () => {
    const { receiver, settings } = await smtp();
    receiver.rcptPolicy = (_address, attempt) => (attempt === 1 ? { code: 451, message: "try again later" } : null);
    const attempts: DeliveryAttempt[] = [];
    const [result] = await deliverer(settings, attempts).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(result).toMatchObject({ status: "delivered", attempts: 2 });
    expect(attempts.map((a) => [a.status, a.responseCode])).toEqual([
      ["retrying", 451],
      ["delivered", 250],
    ]);
  });

  it("does not retry a permanent (5xx) refusal", async () => {
    const { receiver, settings } = await smtp();
    receiver.rcptPolicy = () => ({ code: 550, message: "no such user" });
    const [result] = await deliverer(settings).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["ghost@example.net"]) },
    });
    expect(result).toMatchObject({ status: "failed", attempts: 1 });
    expect(result?.error).toMatch(/550/);
    expect(receiver.received).toEqual([]);
  });

  it("delivers to the accepted recipients and reports the refused ones", async () => {
    const { receiver, settings } = await smtp();
    receiver.rcptPolicy = (address) => (address === "ghost@example.net" ? { code: 550, message: "no such user" } : null);
    const [result] = await deliverer(settings).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net", "ghost@example.net"]) },
    });
    expect(result).toMatchObject({ status: "delivered", error: "rejected: ghost@example.net" });
    expect(receiver.received[0]?.envelopeTo).toEqual(["noc@example.net"]);
  });

  it("retries while the server is down, then fails without throwing", async () => {
    const { receiver, settings } = await smtp();
    await receiver.stop();
    receivers.splice(receivers.indexOf(receiver), 1);
    const [result] = await deliverer(settings).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(result).toMatchObject({ status: "failed", attempts: 3 });
    expect(result?.error).toMatch(/ECONNREFUSED|ECONNECTION/);
  });

  it("skips e-mail without an SMTP server or recipients", async () => {
    const none = await deliverer(null).deliver({
      event: "test",
      notification: null,
      channels: { email: email(["noc@example.net"]) },
    });
    expect(none).toMatchObject([{ status: "skipped", error: "no SMTP server configured" }]);
    const { settings } = await smtp();
    const empty = await deliverer(settings).deliver({ event: "test", notification: null, channels: { email: email([]) } });
    expect(empty).toMatchObject([{ status: "skipped", error: "no recipients" }]);
  });
});
