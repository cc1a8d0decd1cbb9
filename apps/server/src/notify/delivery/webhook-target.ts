/**
 * Which addresses a webhook may be sent to (server-side request forgery).
 * A webhook URL is chosen by an organization's admin but fetched by the
 * server, from inside its network: without a check it reaches the server's
 * own loopback services, the cloud metadata endpoint (instance credentials)
 * and any internal host, and the test delivery reports their HTTP status.
 *
 * Refused always: loopback, link-local, unspecified, multicast/broadcast,
 * cloud metadata addresses, and reserved or translation ranges (6to4, Teredo,
 * NAT64 embed IPv4 addresses). Refused unless TERN_WEBHOOK_ALLOW_PRIVATE:
 * private ranges (RFC 1918, unique-local IPv6, carrier-grade NAT). Networks
 * in TERN_WEBHOOK_ALLOWED_NETWORKS are allowed whatever their class (tests
 * and the lab deliver to loopback receivers).
 *
 * Checked twice: when the URL is saved (its literal address, or every address
 * its name resolves to now) and when each request connects (the addresses the
 * socket is about to use), so a name re-pointed at 127.0.0.1 after saving
 * (DNS rebinding) is refused too. Redirects are never followed.
 */
import dns, { type LookupAddress, type LookupOptions } from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { Agent } from "undici";

export interface WebhookTargetPolicy {
  /** Private ranges (RFC 1918, fc00::/7, 100.64.0.0/10) allowed. */
  allowPrivate: boolean;
  /** Networks allowed whatever their class, e.g. 127.0.0.0/8 for a receiver on the same host. */
  allowedNetworks: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

/** The strictest policy: public unicast addresses only. */
export const PUBLIC_ONLY: WebhookTargetPolicy = { allowPrivate: false, allowedNetworks: [] };

/** The policy the server's settings give (TERN_WEBHOOK_ALLOW_PRIVATE, TERN_WEBHOOK_ALLOWED_NETWORKS). */
export function webhookTargetPolicy(config: {
  TERN_WEBHOOK_ALLOW_PRIVATE: boolean;
  TERN_WEBHOOK_ALLOWED_NETWORKS: string;
}): WebhookTargetPolicy {
  return {
    allowPrivate: config.TERN_WEBHOOK_ALLOW_PRIVATE,
    allowedNetworks: parseNetworks(config.TERN_WEBHOOK_ALLOWED_NETWORKS),
  };
}

/** Parses a comma-separated CIDR list (`127.0.0.0/8, ::1/128`); a bare address is a /32 or /128. Throws on a bad entry. */
export function parseNetworks(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => {
      if (s.includes("/")) return ipaddr.parseCIDR(s);
      const addr = ipaddr.parse(s);
      return [addr, addr.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    });
}

/** Instance metadata services (AWS, GCP, Azure, Oracle: 169.254.169.254; AWS IPv6; Alibaba): refused even where their range is allowed. */
const METADATA = new Set(["169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200"]);

const ALWAYS_REFUSED: Record<string, string> = {
  loopback: "loopback",
  linkLocal: "link-local",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
};
const PRIVATE = new Set(["private", "uniqueLocal", "carrierGradeNat"]);

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** Whether a connection to `address` (an IP literal) is allowed by `policy`. */
export function checkAddress(address: string, policy: WebhookTargetPolicy): AddressVerdict {
  if (!ipaddr.isValid(address)) return { allowed: false, reason: "not an IP address" };
  // IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it reaches.
  const addr = ipaddr.process(address);
  for (const [net, bits] of policy.allowedNetworks) {
    if (net.kind() === addr.kind() && addr.match(net as never, bits)) return { allowed: true };
  }
  if (METADATA.has(addr.toNormalizedString()) || METADATA.has(addr.toString()))
    return { allowed: false, reason: "cloud metadata address" };
  const range = addr.range();
  if (range === "unicast") return { allowed: true };
  const always = ALWAYS_REFUSED[range];
  if (always) return { allowed: false, reason: `${always} address` };
  if (PRIVATE.has(range)) {
    return policy.allowPrivate
      ? { allowed: true }
      : { allowed: false, reason: "private address (set TERN_WEBHOOK_ALLOW_PRIVATE=true to allow)" };
  }
  return { allowed: false, reason: `reserved address range (${range})` };
}

/** A webhook target the policy refuses; `code` lets the HTTP layer answer with a machine code. */
export class WebhookTargetRefused extends Error {
  readonly code = "WEBHOOK_TARGET_FORBIDDEN";
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(
      host === address
        ? `webhook target ${address} refused: ${reason}`
        : `webhook target ${host} (${address}) refused: ${reason}`,
    );
  }
}

/** The host of a URL as a bare name or address (IPv6 without brackets). */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

type Lookup = (host: string) => Promise<LookupAddress[]>;
const systemLookup: Lookup = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * Checks a webhook URL before it is stored: its literal address, or every
 * address its name resolves to now. A name that does not resolve passes (DNS
 * may be down while the admin saves); the request checks again when it connects.
 * Returns the refusal, or null when the URL may be used.
 */
export async function checkWebhookUrl(
  text: string,
  policy: WebhookTargetPolicy,
  lookup: Lookup = systemLookup,
): Promise<WebhookTargetRefused | null> {
  const host = urlHost(new URL(text));
  if (net.isIP(host)) {
    const v = checkAddress(host, policy);
    return v.allowed ? null : new WebhookTargetRefused(host, host, v.reason);
  }
  // Slow DNS must not hold the admin's request: after 3 s the name passes here and is checked when used.
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<LookupAddress[]>((resolve) => {
    timer = setTimeout(() => resolve([]), 3000);
  });
  const addresses = await Promise.race([lookup(host).catch(() => [] as LookupAddress[]), timeout]).finally(() =>
    clearTimeout(timer),
  );
  for (const a of addresses) {
    const v = checkAddress(a.address, policy);
    if (!v.allowed) return new WebhookTargetRefused(host, a.address, v.reason);
  }
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that resolves as usual and refuses the whole
 * name when any of its addresses is refused (the socket may try each of them).
 */
export function guardedLookup(policy: WebhookTargetPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const v = checkAddress(a.address, policy);
        if (!v.allowed) return callback(new WebhookTargetRefused(hostname, a.address, v.reason) as never, []);
      }
      const first = addresses[0];
      if (options.all) return callback(null, addresses);
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), []);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The HTTP dispatcher of webhook requests: every connection it opens has its
 * resolved addresses checked. An IP literal is never looked up, so the caller
 * checks the URL's literal address itself (assertLiteralAllowed).
 */
export function webhookDispatcher(policy: WebhookTargetPolicy): Agent {
  return new Agent({ connect: { lookup: guardedLookup(policy) as never } });
}

/** Throws WebhookTargetRefused when the URL's host is an IP literal the policy refuses. */
export function assertLiteralAllowed(url: URL, policy: WebhookTargetPolicy): void {
  const host = urlHost(url);
  if (!net.isIP(host)) return;
  const v = checkAddress(host, policy);
  if (!v.allowed) throw new WebhookTargetRefused(host, host, v.reason);
}
