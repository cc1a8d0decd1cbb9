/**
 * DNS lookups from the router, in the agent's process (node:dns), no child:
 * - type A or AAAA without a `server`: getaddrinfo (`dns.lookup`), the
 *   router's resolver exactly as its programs see it (/etc/hosts, nsswitch,
 *   resolv.conf), so `localhost` and local names resolve as they do there;
 * - any other type, or a `server` to ask: c-ares (`dns.Resolver`) with the
 *   servers of /etc/resolv.conf or the one given, which returns TTLs and
 *   every record type.
 * `dig` (dnsutils) is not among the agent's Debian dependencies, and
 * `getent` only does host lookups, hence node:dns. One line per answer.
 */
import { lookup, Resolver } from "node:dns/promises";
import type { DnsLookupParams, DnsLookupResult } from "@tern/protocol";
import { isAddress } from "./ping.ts";
import type { StreamContext } from "./stream-context.ts";

type Answer = DnsLookupResult["answers"][number];

const text = (v: unknown) => String(v).slice(0, 2000);

async function viaResolver(resolver: Resolver, p: DnsLookupParams): Promise<Answer[]> {
  const name = p.name;
  switch (p.type) {
    case "A":
      return (await resolver.resolve4(name, { ttl: true })).map((a) => ({ type: "A", value: a.address, ttl: a.ttl }));
    case "AAAA":
      return (await resolver.resolve6(name, { ttl: true })).map((a) => ({ type: "AAAA", value: a.address, ttl: a.ttl }));
    case "CNAME":
      return (await resolver.resolveCname(name)).map((v) => ({ type: "CNAME", value: text(v), ttl: null }));
    case "NS":
      return (await resolver.resolveNs(name)).map((v) => ({ type: "NS", value: text(v), ttl: null }));
    case "MX":
      return (await resolver.resolveMx(name)).map((m) => ({ type: "MX", value: text(`${m.priority} ${m.exchange}`), ttl: null }));
    case "TXT":
      return (await resolver.resolveTxt(name)).map((t) => ({ type: "TXT", value: text(t.join("")), ttl: null }));
    case "SRV":
      return (await resolver.resolveSrv(name)).map((s) => ({
        type: "SRV",
        value: text(`${s.priority} ${s.weight} ${s.port} ${s.name}`),
        ttl: null,
      }));
    case "SOA": {
      const s = await resolver.resolveSoa(name);
      return [{ type: "SOA", value: text(`${s.nsname} ${s.hostmaster} ${s.serial}`), ttl: s.minttl }];
    }
    case "PTR":
      return isAddress(name)
        ? (await resolver.reverse(name)).map((v) => ({ type: "PTR", value: text(v), ttl: null }))
        : (await resolver.resolvePtr(name)).map((v) => ({ type: "PTR", value: text(v), ttl: null }));
    case "CAA":
      return (await resolver.resolveCaa(name)).map((c) => ({
        type: "CAA",
        value: text(
          `${c.critical} ${
            Object.entries(c)
              .find(([k]) => k !== "critical")
              ?.join(" ") ?? ""
          }`,
        ),
        ttl: null,
      }));
  }
}

export async function runDnsLookup(p: DnsLookupParams, stream: StreamContext): Promise<DnsLookupResult> {
  const started = performance.now();
  const system = !p.server && (p.type === "A" || p.type === "AAAA");
  const via = system ? "system" : (p.server ?? "resolv.conf");
  let answers: Answer[] = [];
  let error: string | null = null;
  const resolver = new Resolver({ timeout: p.timeoutMs, tries: 1 });
  const onAbort = () => resolver.cancel();
  stream.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (system) {
      const family = p.type === "A" ? 4 : 6;
      const timeLimit = new Promise<never>((_, reject) =>
        setTimeout(() => reject(Object.assign(new Error("time limit"), { code: "ETIMEOUT" })), p.timeoutMs).unref(),
      );
      const found = await Promise.race([lookup(p.name, { all: true, family }), timeLimit]);
      answers = found.map((a) => ({ type: p.type, value: a.address, ttl: null }));
    } else {
      if (p.server) resolver.setServers([p.server]);
      answers = await viaResolver(resolver, p);
    }
  } catch (err) {
    error = String((err as NodeJS.ErrnoException).code ?? (err as Error).message).slice(0, 100);
  } finally {
    stream.signal?.removeEventListener("abort", onAbort);
  }
  answers = answers.slice(0, 500);
  for (const a of answers) stream.onLine(`${p.name} ${a.ttl ?? ""} ${a.type} ${a.value}`.replace(/ {2}/, " "));
  if (error) stream.onLine(`${p.name} ${p.type}: ${error} (via ${via})`);
  return { name: p.name, type: p.type, via, answers, error, durationMs: Math.round(performance.now() - started) };
}
