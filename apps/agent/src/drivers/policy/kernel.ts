/** Observe and change the policy driver's ip rules and routing tables, touching only its own range. */
import type { Runner } from "../../runner.ts";
import { hex, MARK_MASK, MAX_RULES, RULE_BASE, SUPPRESS_BASE } from "./layout.ts";
import { routeArgv, type SlotRoute } from "./render.ts";

interface IpRule {
  priority: number;
  fwmark?: string;
  fwmask?: string;
  table?: string;
  suppress_prefixlen?: number;
}

interface IpRoute {
  type?: string;
  dst: string;
  gateway?: string;
  dev?: string;
}

export interface WantedRule {
  priority: number;
  mark: number;
  /** A table number, or "main" with suppressDefault (the internet-only rule of a peer action). */
  table: number | "main";
  suppressDefault?: boolean;
}

const owned = (p: number) => p >= SUPPRESS_BASE && p < RULE_BASE + MAX_RULES;

export async function observeRules(runner: Runner): Promise<IpRule[]> {
  const r = await runner.run(["ip", "-j", "-4", "rule", "show"]);
  return (JSON.parse(r.stdout || "[]") as IpRule[]).filter((x) => owned(x.priority));
}

const sameRule = (have: IpRule, want: WantedRule) =>
  have.priority === want.priority &&
  Number(have.fwmark) === want.mark &&
  Number(have.fwmask) === MARK_MASK &&
  have.table === String(want.table) &&
  (have.suppress_prefixlen === 0) === (want.suppressDefault === true);

/** argv that adds `w`. */
export function ruleArgv(w: WantedRule): string[] {
  const mark = `${hex(w.mark)}/${hex(MARK_MASK)}`;
  return [
    "ip",
    "-4",
    "rule",
    "add",
    "priority",
    String(w.priority),
    "fwmark",
    mark,
    "lookup",
    String(w.table),
    ...(w.suppressDefault ? ["suppress_prefixlength", "0"] : []),
  ];
}

/** Makes the owned rule range hold exactly `wanted`; returns the tables of rules it removed and whether it changed anything. */
export async function syncRules(
  runner: Runner,
  wanted: readonly WantedRule[],
): Promise<{ changed: boolean; removedTables: number[] }> {
  const have = await observeRules(runner);
  let changed = false;
  const removedTables: number[] = [];
  for (const h of have)
    if (!wanted.some((w) => sameRule(h, w))) {
      await runner.run(["ip", "-4", "rule", "del", "priority", String(h.priority)]);
      if (h.table && /^\d+$/.test(h.table)) removedTables.push(Number(h.table));
      changed = true;
    }
  for (const w of wanted)
    if (!have.some((h) => sameRule(h, w))) {
      await runner.run(ruleArgv(w));
      changed = true;
    }
  return { changed, removedTables };
}

async function observeTable(runner: Runner, table: number): Promise<IpRoute[]> {
  // An empty table does not exist for the kernel: `ip route show table N` then fails.
  const r = await runner.run(["ip", "-j", "-4", "route", "show", "table", String(table)], { allowFailure: true });
  if (r.exitCode !== 0) return [];
  return JSON.parse(r.stdout || "[]") as IpRoute[];
}

function matches(have: IpRoute[], want: SlotRoute): boolean {
  if (want === null) return have.length === 0;
  if (have.length !== 1) return false;
  const h = have[0]!;
  if (h.dst !== "default") return false;
  if (want.kind === "blackhole") return h.type === "blackhole";
  return (h.type ?? "unicast") === "unicast" && h.gateway === want.via && (want.dev === null || h.dev === want.dev);
}

/** Makes `table` hold exactly `route`; returns true when it changed something. */
export async function syncTable(runner: Runner, table: number, route: SlotRoute): Promise<boolean> {
  const have = await observeTable(runner, table);
  if (matches(have, route)) return false;
  if (route === null || have.some((h) => h.dst !== "default"))
    await runner.run(["ip", "-4", "route", "flush", "table", String(table)]);
  if (route !== null) await runner.run(routeArgv(table, route));
  return true;
}

/**
 * Points `table` at `route` without reading it first (one command): for moves
 * the kernel's events trigger, where every spawned command counts against the
 * 100 ms budget. Only the driver writes its tables, so replace is enough.
 */
export async function replaceTable(runner: Runner, table: number, route: SlotRoute): Promise<void> {
  if (route === null) await runner.run(["ip", "-4", "route", "flush", "table", String(table)], { allowFailure: true });
  else await runner.run(routeArgv(table, route));
}
