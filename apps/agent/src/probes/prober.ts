/**
 * The tunnel prober: runs the probe plan of the applied config, keeps one
 * measurement window per (link, target), and serves the figures to the status
 * report (`report()`), the policy driver (`quality()`) and the
 * troubleshooting page. `configure()` after every apply keeps the sessions and
 * windows that did not change, so measurements survive unrelated config
 * changes.
 */
import type { DeviceConfig, LinkReport, TunnelReport } from "@tern/protocol";
import type { DriverContext, Logger } from "../drivers/driver.ts";
import { ExecSpawner, type Spawner } from "../runner.ts";
import type { TunnelDetail, TunnelQualitySource } from "../status/tunnel-quality.ts";
import { FpingSession } from "./fping-session.ts";
import { type PlannedTarget, type ProbePlan, probePlan } from "./plan.ts";
import { type LinkQuality, type LinkQualityLookup, PROBE_PORT, tunnelKey } from "./types.ts";
import { UdpEchoResponder } from "./udp-responder.ts";
import { type ProbeSession, UdpProbeSession } from "./udp-session.ts";
import { QualityWindow } from "./window.ts";

export interface ProberOptions {
  spawner?: Spawner;
  /** UDP port of the Tern probe protocol (tests use another to run side by side). */
  port?: number;
  log?: Logger;
}

interface TargetState {
  window: QualityWindow;
  lastReplyAt: number | null;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export class TunnelProber implements TunnelQualitySource, LinkQualityLookup {
  private readonly spawner: Spawner;
  private readonly port: number;
  private readonly responder: UdpEchoResponder;
  private readonly sessions = new Map<string, ProbeSession>();
  private readonly states = new Map<string, TargetState>();
  private plan: ProbePlan | null = null;
  private tunnelIds: string[] = [];
  private tunnelNames = new Map<string, string>();
  /** Up/down of each tunnel as last seen, to tell the agent at once when one changes. */
  private readonly tunnelUp = new Map<string, boolean>();
  private notify: (reason: string) => void = () => {};

  constructor(private readonly options: ProberOptions = {}) {
    this.spawner = options.spawner ?? new ExecSpawner();
    this.port = options.port ?? PROBE_PORT;
    this.responder = new UdpEchoResponder(this.port, options.log);
  }

  /**
   * Probes what `config` asks for from now on. With `ctx`, a tunnel going up
   * or down calls `ctx.notify()` so a status goes out at once.
   */
  configure(config: DeviceConfig, ctx?: Pick<DriverContext, "notify">): void {
    const plan = probePlan(config);
    this.plan = plan;
    if (ctx) this.notify = ctx.notify;
    this.tunnelIds = config.tunnels.map((t) => t.id);
    this.tunnelNames = new Map(config.tunnels.map((t) => [t.id, `${t.kind} tunnel ${t.num} → ${t.remoteAddress}`]));
    for (const id of this.tunnelUp.keys()) if (!this.tunnelIds.includes(id)) this.tunnelUp.delete(id);
    this.responder.setAddresses(plan.responderAddresses);

    const wantedStates = new Set(plan.targets.map((t) => stateKey(t.link, t.target)));
    for (const key of this.states.keys()) if (!wantedStates.has(key)) this.states.delete(key);
    for (const key of wantedStates) {
      const s = this.states.get(key);
      if (s) {
        s.window.resize(plan.windowSize);
        s.window.setInterval(plan.intervalMs);
      } else this.states.set(key, { window: new QualityWindow(plan.windowSize, plan.intervalMs), lastReplyAt: null });
    }

    const wanted = new Map<string, () => ProbeSession>();
    for (const group of groupSessions(plan)) wanted.set(group.key, () => this.makeSession(group.targets, plan));
    for (const [key, session] of this.sessions)
      if (!wanted.has(key)) {
        session.stop();
        this.sessions.delete(key);
      }
    for (const [key, make] of wanted)
      if (!this.sessions.has(key)) {
        const session = make();
        this.sessions.set(key, session);
        session.start();
        this.options.log?.debug("probe session started", { session: session.id });
      }
  }

  private makeSession(targets: PlannedTarget[], plan: ProbePlan): ProbeSession {
    const first = targets[0]!;
    const links = new Map(targets.map((t) => [t.target, t.link]));
    const options = {
      intervalMs: plan.intervalMs,
      timeoutMs: plan.timeoutMs,
      onResult: (target: string, seq: number, rttMs: number | null) => {
        const link = links.get(target);
        if (link) this.record(link, target, seq, rttMs);
      },
    };
    if (first.method === "udp") return new UdpProbeSession(first.source!, first.target, this.port, options);
    return new FpingSession(
      this.spawner,
      { ...(first.iface ? { iface: first.iface } : {}), ...(first.source ? { address: first.source } : {}) },
      targets.map((t) => t.target),
      options,
    );
  }

  private record(link: string, target: string, seq: number, rttMs: number | null): void {
    const s = this.states.get(stateKey(link, target));
    if (!s) return;
    // The first answer ever: the path exists from here; probes before it measured its set-up, not its loss.
    if (rttMs !== null && s.lastReplyAt === null) s.window.startAt(seq);
    s.window.record(seq, rttMs);
    if (rttMs !== null) s.lastReplyAt = performance.now();
    // Every probe ends in an answer or a time-out, so a tunnel that stops answering is seen here too.
    const id = this.tunnelIds.find((t) => tunnelKey(t) === link);
    if (id === undefined) return;
    const up = this.windowQuality(link)?.up ?? false;
    if (this.tunnelUp.get(id) === up) return;
    const first = !this.tunnelUp.has(id);
    this.tunnelUp.set(id, up);
    if (!(first && !up)) this.notify(`tunnel ${id} ${up ? "up" : "down"}`);
  }

  private targetQuality(link: string, target: string, s: TargetState, last?: number): LinkQuality {
    const st = s.window.stats(last);
    const since = s.lastReplyAt === null ? null : performance.now() - s.lastReplyAt;
    return {
      key: link,
      up: since !== null && since <= (this.plan?.downAfterMs ?? 15_000),
      lossPercent: round(st.lossPercent),
      rttMs: round(st.rttMs),
      srttMs: round(st.srttMs),
      jitterMs: round(st.jitterMs),
      samples: st.samples,
      windowMs: st.windowMs,
      sent: s.window.totals.answered + s.window.totals.lost,
      received: s.window.totals.answered,
      target,
      sinceLastReplyMs: since === null ? null : Math.round(since),
    };
  }

  /**
   * The policy driver's view of a link: its figures over the newest
   * POLICY_HORIZON_MS of probes (the report's window is a minute, for
   * accuracy; path selection keeps the horizon it had with 30 probes a second
   * apart, so a path that recovered is taken back as soon as before).
   */
  quality(key: string): LinkQuality | null {
    const interval = this.plan?.intervalMs ?? 1000;
    return this.bestOf(key, Math.max(MIN_POLICY_PROBES, Math.ceil(POLICY_HORIZON_MS / interval)));
  }

  /** The link's figures over the whole window (what the status report carries); null when not probed. */
  windowQuality(key: string): LinkQuality | null {
    return this.bestOf(key);
  }

  /** The link's figures from its best target (up first, then least loss, then lowest RTT); null when not probed. */
  private bestOf(key: string, last?: number): LinkQuality | null {
    let best: LinkQuality | null = null;
    for (const [k, s] of this.states) {
      const [link, target] = splitStateKey(k);
      if (link !== key) continue;
      const q = this.targetQuality(link, target, s, last);
      if (!best || better(q, best)) best = q;
    }
    return best;
  }

  /** Per-target figures of every probed link (all targets, with lifetime answered/lost counts). */
  targetDetails(): (LinkQuality & { answered: number; lost: number })[] {
    return [...this.states].map(([k, s]) => {
      const [link, target] = splitStateKey(k);
      return { ...this.targetQuality(link, target, s), ...s.window.totals };
    });
  }

  intervalMs(): number {
    return this.plan?.intervalMs ?? 1000;
  }

  /**
   * One TunnelReport per tunnel of the applied config (`rtt` is the window
   * mean), with the window's span and the target's lifetime sent/received
   * counts (they restart from 0 when the target or the agent changes).
   */
  report(): TunnelReport[] {
    return this.tunnelIds.map((id) => {
      const q = this.windowQuality(tunnelKey(id));
      return q
        ? {
            id,
            up: q.up,
            loss: q.lossPercent,
            rtt: q.rttMs,
            jitter: q.jitterMs,
            samples: q.samples,
            windowMs: q.windowMs,
            sent: q.sent,
            received: q.received,
          }
        : { id, up: false, loss: 0, rtt: 0, jitter: 0, samples: 0, windowMs: 0, sent: 0, received: 0 };
    });
  }

  /** Window figures of each probed WAN link (`wan:<ifname>`), for the server's baselines. */
  links(): LinkReport[] {
    const names = new Set((this.plan?.targets ?? []).filter((t) => t.link.startsWith("wan:")).map((t) => t.link));
    return [...names].flatMap((key) => {
      const q = this.windowQuality(key);
      return q
        ? [{ name: key.slice(4), up: q.up, loss: q.lossPercent, rtt: q.rttMs, jitter: q.jitterMs, samples: q.samples }]
        : [];
    });
  }

  /** Smoothed RTT and the target each tunnel's figures come from, for the troubleshooting page. */
  details(): TunnelDetail[] {
    return this.tunnelIds.flatMap((id) => {
      const q = this.windowQuality(tunnelKey(id));
      return q ? [{ id, name: this.tunnelNames.get(id) ?? id, srttMs: q.srttMs, target: q.target }] : [];
    });
  }

  stop(): void {
    for (const s of this.sessions.values()) s.stop();
    this.sessions.clear();
    this.responder.stop();
    this.plan = null;
  }

  /** The TunnelQualitySource's shutdown: stops every session and the responder. */
  close(): void {
    this.stop();
  }
}

/** How far back the policy driver looks (30 probes a second apart before issue 17). */
const POLICY_HORIZON_MS = 30_000;
const MIN_POLICY_PROBES = 10;

const stateKey = (link: string, target: string) => `${link}|${target}`;
const splitStateKey = (k: string) => k.split("|") as [string, string];

function better(a: LinkQuality, b: LinkQuality): boolean {
  if (a.up !== b.up) return a.up;
  if (a.lossPercent !== b.lossPercent) return a.lossPercent < b.lossPercent;
  return a.rttMs < b.rttMs;
}

/** UDP: one session per (source, target). ICMP: one fping per (device, source) for all its targets. */
function groupSessions(plan: ProbePlan): { key: string; targets: PlannedTarget[] }[] {
  const groups = new Map<string, PlannedTarget[]>();
  const timing = `${plan.intervalMs}/${plan.timeoutMs}`;
  for (const t of plan.targets) {
    const key =
      t.method === "udp" ? `udp|${t.source}|${t.target}|${timing}` : `icmp|${t.iface ?? ""}|${t.source ?? ""}|${timing}`;
    const list = groups.get(key) ?? [];
    if (!list.some((x) => x.target === t.target)) list.push(t);
    groups.set(key, list);
  }
  // The target list is part of an fping session's identity: a changed list restarts it.
  return [...groups].map(([key, targets]) => ({
    key: targets[0]!.method === "icmp" ? `${key}|${targets.map((t) => t.target).join(",")}` : key,
    targets,
  }));
}
