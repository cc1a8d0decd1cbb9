/** Live interface facts the daemon drivers render from (read-only `ip -j` queries). */
import type { Runner } from "../runner.ts";
import { pollUntil } from "./wait.ts";

interface AddrJson {
  ifname: string;
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

/** IPv4 addresses ("a.b.c.d/n") of `ifname` in kernel order (primary first); empty when it has none or does not exist. */
export async function interfaceAddresses(runner: Runner, ifname: string): Promise<string[]> {
  const r = await runner.run(["ip", "-j", "-4", "addr", "show", "dev", ifname], { allowFailure: true });
  if (r.exitCode !== 0) return [];
  const links = JSON.parse(r.stdout || "[]") as AddrJson[];
  return links.flatMap((l) =>
    (l.addr_info ?? []).filter((a) => a.family === "inet" && a.local).map((a) => `${a.local}/${a.prefixlen}`),
  );
}

/** The primary IPv4 address (no prefix) of each interface, null when it has none. */
export async function primaryAddresses(runner: Runner, ifnames: Iterable<string>): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const name of new Set(ifnames)) {
    const first = (await interfaceAddresses(runner, name))[0];
    out.set(name, first ? (first.split("/")[0] ?? null) : null);
  }
  return out;
}

/** Waits until network device `ifname` exists; false after `timeoutMs`. */
export function waitForDevice(runner: Runner, ifname: string, timeoutMs = 5_000): Promise<boolean> {
  return pollUntil(
    async () => (await runner.run(["ip", "-j", "link", "show", "dev", ifname], { allowFailure: true })).exitCode === 0,
    timeoutMs,
  );
}
