/**
 * The multi-link policy driver: marks matching LAN traffic (nft), sends each
 * mark to its own routing table (ip rule), and keeps each table's default
 * route on the link the rule's order picks. A small loop, started by apply
 * and stopped on teardown, re-evaluates at the probe rate and moves traffic
 * (one atomic `ip route replace`) when measurements change.
 */
import { join } from "node:path";
import type { DeviceConfig } from "@tern/protocol";
import {
  type DampingOptions,
  type DampingState,
  DEFAULT_DAMPING,
  HealingLog,
  healingMode,
  newDampingState,
  observeLink,
  reuseInMs,
} from "../../healing/index.ts";
import type { WanChange } from "../../kernel-events/types.ts";
import type { LinkQualityLookup } from "../../probes/types.ts";
import type { ApplyOutcome, Driver, DriverContext, DriverDetails, DumpItem } from "../driver.ts";
import { commandItem } from "../dump.ts";
import { applyOwnedTable, scriptPath, tableScript } from "../firewall/nft-table.ts";
import { replaceTable, ruleArgv, syncRules, syncTable, type WantedRule } from "./kernel.ts";
import { KernelGate } from "./kernel-gate.ts";
import { POLICY_TABLE, slotSuppress } from "./layout.ts";
import { candidates, linksOf, type PolicyLink } from "./links.ts";
import { type RuleSlot, renderPolicyTable, routeArgv, ruleSlots, type SlotRoute, slotRoute } from "./render.ts";
import { newSelectionState, type SelectionHealing, type SelectionState, selectLink } from "./select.ts";

/**
 * The driver's ip rules: each slot's mark to its table; a `peer` action
 * (cloud security) first keeps every main-table route but the default one.
 */
export function wantedRules(slots: readonly RuleSlot[]): WantedRule[] {
  return slots.flatMap((s) => [
    ...(s.rule.tunnels ? [{ priority: slotSuppress(s.slot), mark: s.mark, table: "main" as const, suppressDefault: true }] : []),
    { priority: s.table, mark: s.mark, table: s.table },
  ]);
}

export interface PolicyDriverOptions {
  quality: LinkQualityLookup;
  /** Monotonic clock in ms (tests pass their own). */
  now?: () => number;
  /** Re-evaluation period; default: the probe interval. */
  loopMs?: number;
  /** Where damping of flapping links is reported (the agent's one log; tests pass their own). */
  healing?: HealingLog;
  damping?: DampingOptions;
}

/** A link counts as answering when its last answer is younger than this many probe intervals (and at least 1 s). */
const SILENT_INTERVALS = 3;

interface Active {
  slots: RuleSlot[];
  links: Map<string, PolicyLink[]>;
  ctx: DriverContext;
  config: DeviceConfig;
}

export class PolicyDriver implements Driver {
  readonly name = "policy" as const;
  private readonly states = new Map<string, SelectionState>();
  /** The link each rule's table points at in the kernel (what `selections()` reports). */
  private readonly applied = new Map<string, string | null>();
  private active: Active | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Serialises apply and loop ticks: both change the same tables. */
  private lock: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  /** Flap damping state per link key (docs/healing.md). */
  private readonly damping = new Map<string, DampingState>();
  readonly healing: HealingLog;
  /** The kernel's carrier and address events on the WANs (see kernel-gate.ts). */
  private readonly gate = new KernelGate();

  constructor(private readonly options: PolicyDriverOptions) {
    this.now = options.now ?? (() => performance.now());
    this.healing = options.healing ?? new HealingLog();
  }

  /** Devices whose traffic is never steered: the WANs (tunnel devices, `ipsec0` and `xfrm*`, are added by the render). */
  private upstream(config: DeviceConfig): string[] {
    return config.interfaces.filter((i) => i.type === "WAN").map((i) => i.name);
  }

  render(config: DeviceConfig): string | null {
    const slots = ruleSlots(config);
    return slots.length === 0
      ? null
      : tableScript(POLICY_TABLE, renderPolicyTable(slots, this.upstream(config)), "multi-link policy marks");
  }

  apply(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    return this.serial(() => this.applyNow(config, ctx));
  }

  private async applyNow(config: DeviceConfig, ctx: DriverContext): Promise<ApplyOutcome> {
    const script = this.render(config);
    const slots = ruleSlots(config);
    const all = linksOf(config);
    const links = new Map(slots.map((s) => [s.rule.name, candidates(s.rule, all, config)]));
    let changed = await applyOwnedTable(ctx.runner, join(ctx.runDir, this.name), POLICY_TABLE, script);
    const rules = await syncRules(ctx.runner, wantedRules(slots));
    changed ||= rules.changed;
    for (const t of rules.removedTables)
      if (!slots.some((s) => s.table === t)) changed = (await syncTable(ctx.runner, t, null)) || changed;
    for (const name of this.states.keys())
      if (!links.has(name)) {
        this.states.delete(name);
        this.applied.delete(name);
      }
    const healing = this.healingView(config, [...links.values()].flat(), ctx);
    for (const s of slots) {
      changed = (await syncTable(ctx.runner, s.table, this.choose(s, links.get(s.rule.name)!, healing))) || changed;
      this.applied.set(s.rule.name, this.states.get(s.rule.name)!.current);
    }
    this.gate.retain(new Set(this.upstream(config)));
    this.active = slots.length > 0 ? { slots, links, ctx, config } : null;
    this.schedule();
    return { changed };
  }

  /**
   * Observes each link for flap damping (mode `act` or `suggest`) and returns
   * what selection must honour: held-down links in mode `act`, the links the
   * server asks to avoid (unless mode `off`).
   */
  private healingView(config: DeviceConfig, links: PolicyLink[], ctx: DriverContext): SelectionHealing {
    const mode = healingMode(config);
    if (mode === "off") {
      this.damping.clear();
      return { heldDown: () => null, avoid: new Set() };
    }
    const o = this.options.damping ?? DEFAULT_DAMPING;
    const now = this.now();
    const silentAfter = Math.max(1000, SILENT_INTERVALS * this.options.quality.intervalMs());
    const keys = new Set(links.map((l) => l.key));
    for (const k of this.damping.keys()) if (!keys.has(k)) this.damping.delete(k);
    for (const key of keys) {
      const q = this.options.quality.quality(key);
      if (!q) continue;
      const up = q.sinceLastReplyMs !== null && q.sinceLastReplyMs < silentAfter;
      const before = this.damping.get(key) ?? newDampingState();
      const { state, event } = observeLink(before, up, now, o);
      this.damping.set(key, state);
      if (!event) continue;
      const figures = {
        penalty: Math.round(state.penalty),
        flaps: state.flaps,
        reuseInSeconds: Math.round(reuseInMs(state, now, o) / 1000),
        loss: q.lossPercent,
        rtt: q.rttMs,
      };
      const reason =
        event === "damped"
          ? `flapping: ${state.flaps} flaps, penalty ${Math.round(state.penalty)} > ${o.suppress}; held down for ${figures.reuseInSeconds} s unless it flaps again`
          : `stable again: penalty ${Math.round(state.penalty)} < ${o.reuse}`;
      this.healing.record(
        { kind: event === "damped" ? "damp" : "undamp", link: key, reason, before: figures, after: null },
        mode === "suggest",
      );
      ctx.log.info(`policy: ${key} ${event === "damped" ? "damped" : "reused"}`, { reason, suggested: mode === "suggest" });
      ctx.notify(`healing: ${key} ${event}`);
    }
    const act = mode === "act";
    return {
      heldDown: (k) => {
        const d = this.damping.get(k);
        return act && d?.suppressed ? `damped: flapping (penalty ${Math.round(d.penalty)})` : null;
      },
      avoid: new Set(config.healing?.avoid ?? []),
    };
  }

  private choose(s: RuleSlot, links: PolicyLink[], healing: SelectionHealing): SlotRoute {
    const state = this.states.get(s.rule.name) ?? newSelectionState();
    this.states.set(s.rule.name, state);
    const now = this.now();
    const quality = (k: string) => this.options.quality.quality(k);
    const key = selectLink(
      state,
      links,
      quality,
      s.rule.order === "link-quality" ? s.rule.linkQuality : null,
      now,
      healing,
      (l) => this.gate.blocked(l.wan ?? null, quality(l.key), now),
    );
    return slotRoute(s.rule, links.find((l) => l.key === key) ?? null);
  }

  private schedule(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!this.active) return;
    this.timer = setInterval(() => void this.serial(() => this.tick()), this.options.loopMs ?? this.options.quality.intervalMs());
    this.timer.unref();
  }

  private async tick(kernel = false): Promise<void> {
    const a = this.active;
    if (!a) return;
    const healing = this.healingView(a.config, [...a.links.values()].flat(), a.ctx);
    for (const s of a.slots) {
      const before = this.states.get(s.rule.name)?.current ?? null;
      const route = this.choose(s, a.links.get(s.rule.name)!, healing);
      const state = this.states.get(s.rule.name)!;
      if (state.current === before) continue;
      try {
        if (kernel) await replaceTable(a.ctx.runner, s.table, route);
        else await syncTable(a.ctx.runner, s.table, route);
        this.applied.set(s.rule.name, state.current);
        a.ctx.log.info("policy moved traffic", { rule: s.rule.name, change: state.reason });
        a.ctx.notify(`policy ${s.rule.name}: ${state.reason}`);
      } catch (err) {
        // Try again on the next tick from the same starting point.
        state.current = before;
        a.ctx.log.warn("policy could not move traffic", { rule: s.rule.name, error: (err as Error).message });
      }
    }
  }

  /**
   * The kernel reported WANs whose carrier or address changed: a link over a
   * WAN that cannot carry traffic is left now, not at the next probe tick.
   * Resolves once the tables say so.
   */
  wanChanged(changes: readonly WanChange[]): Promise<void> {
    const now = this.now();
    for (const c of changes) this.gate.update(c.after, now);
    return this.serial(() => this.tick(true));
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.lock.then(fn, fn);
    this.lock = next.catch(() => {});
    return next;
  }

  /** The link each rule's traffic uses now in the kernel (null = fallback), for status and the troubleshooting page. */
  selections(): { rule: string; link: string | null; reason: string }[] {
    return [...this.applied].map(([rule, link]) => ({ rule, link, reason: this.states.get(rule)?.reason ?? "" }));
  }

  healingReports() {
    return this.healing.pending();
  }

  /** Stops the evaluation loop (agent shutdown); the kernel state stays as applied. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.lock;
  }

  close(): Promise<void> {
    return this.stop();
  }

  /** The link each rule's traffic takes now, and why. */
  async inspect(): Promise<DriverDetails> {
    const selections = this.selections();
    return {
      lines: selections.map((s) => `rule ${s.rule} → ${s.link ?? "fallback"}${s.reason ? ` (${s.reason})` : ""}`),
      data: selections,
    };
  }

  /** The marking table, the agent's ip rules and each rule's routing table. */
  async dump(config: DeviceConfig, ctx: DriverContext): Promise<DumpItem[]> {
    const items = [
      await commandItem(ctx, "nft-table-tern_policy.txt", ["nft", "-a", "list", "table", POLICY_TABLE.family, POLICY_TABLE.name]),
      await commandItem(ctx, "ip-rule.json", ["ip", "-j", "-4", "rule", "show"]),
    ];
    for (const s of ruleSlots(config))
      items.push(
        await commandItem(ctx, `ip-route-table-${s.table}.json`, ["ip", "-j", "-4", "route", "show", "table", String(s.table)]),
      );
    items.push({ name: "selections.json", content: `${JSON.stringify(this.selections(), null, 2)}\n` });
    return items;
  }

  plan(config: DeviceConfig, ctx: Pick<DriverContext, "mode" | "runDir" | "stateDir">) {
    const script = this.render(config);
    if (script === null) return { files: [], commands: [] };
    const path = scriptPath(join(ctx.runDir, this.name), POLICY_TABLE);
    const all = linksOf(config);
    const commands: string[][] = [["nft", "-f", path]];
    for (const s of ruleSlots(config)) {
      for (const w of wantedRules([s])) commands.push(ruleArgv(w));
      // From scratch no link is measured yet: the first candidate, as apply would pick.
      const route = slotRoute(s.rule, candidates(s.rule, all, config)[0] ?? null);
      if (route) commands.push(routeArgv(s.table, route));
    }
    return { files: [{ path: ctx.mode === "standalone" ? "tern_policy.nft" : path, content: script, mode: 0o644 }], commands };
  }
}
