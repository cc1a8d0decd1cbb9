/**
 * ICMP echo probes for targets that run no Tern agent (a peer's health-check
 * addresses, a WAN gateway): one long-running `fping -l` per source, parsed
 * line by line. fping sends one echo per target per interval and prints one
 * line per probe: an answer with its RTT, or "timed out" after `-t`.
 */
import type { SpawnedProcess, Spawner } from "../runner.ts";
import type { ProbeSession, ProbeSessionOptions } from "./udp-session.ts";

const REPLY = /^(\S+)\s+: \[(\d+)\], \d+ bytes, ([\d.]+) ms/;
const TIMEOUT = /^(\S+)\s+: \[(\d+)\], timed out/;
const RESTART_MS = 2000;
/** fping's own default gap between any two echoes it sends (`-i`). */
const FPING_GAP_MS = 10;

/**
 * The gap between any two echoes of one fping (`-i`). fping sends to its
 * targets one after another at least this far apart, so at its default of
 * 10 ms a session probes at most 100 times a second: 3 targets every 5 ms
 * or 25 every 200 ms would go out slower than asked, silently. The gap is
 * narrowed to fit the targets into the period (under 1 ms fping needs root,
 * as the agent runs).
 */
export function fpingGapMs(intervalMs: number, targets: number): number {
  return Math.max(1, Math.min(FPING_GAP_MS, Math.floor(intervalMs / Math.max(1, targets))));
}

/** One parsed fping line: an answer (rttMs) or a loss (null); null for anything else. */
export function parseFpingLine(line: string): { target: string; seq: number; rttMs: number | null } | null {
  const r = REPLY.exec(line);
  if (r) return { target: r[1]!, seq: Number(r[2]), rttMs: Number(r[3]) };
  const t = TIMEOUT.exec(line);
  if (t) return { target: t[1]!, seq: Number(t[2]), rttMs: null };
  return null;
}

export interface FpingSource {
  /** Bind to this device (SO_BINDTODEVICE), e.g. a WAN interface for its gateway. */
  iface?: string;
  /** Source address, e.g. a LAN address inside a peer tunnel's traffic selectors. */
  address?: string;
}

export class FpingSession implements ProbeSession {
  readonly id: string;
  private proc: SpawnedProcess | null = null;
  private stopped = true;
  private restart: NodeJS.Timeout | null = null;
  /** fping restarts its sequence at 0; this offset keeps ours increasing across restarts. */
  private base = 0;
  private maxSeq = -1;
  /** Per target: lowest sequence not finalised yet, and finalised ones above it. */
  private readonly books = new Map<string, { next: number; done: Set<number> }>();

  constructor(
    private readonly spawner: Spawner,
    private readonly source: FpingSource,
    private readonly targets: readonly string[],
    private readonly options: ProbeSessionOptions,
  ) {
    this.id = `icmp ${source.iface ?? ""}/${source.address ?? ""} → ${targets.join(",")}`;
  }

  argv(): string[] {
    const argv = [
      "fping",
      "-l",
      "-p",
      String(this.options.intervalMs),
      "-i",
      String(fpingGapMs(this.options.intervalMs, this.targets.length)),
      "-t",
      String(this.options.timeoutMs),
      "-B",
      "1",
      "-r",
      "0",
    ];
    if (this.source.iface) argv.push("-I", this.source.iface);
    if (this.source.address) argv.push("-S", this.source.address);
    return [...argv, ...this.targets];
  }

  start(): void {
    this.stopped = false;
    this.base = this.maxSeq + 1;
    this.proc = this.spawner.spawn(
      this.argv(),
      (line) => {
        const p = parseFpingLine(line);
        if (!p || !this.targets.includes(p.target)) return;
        const seq = this.base + p.seq;
        this.maxSeq = Math.max(this.maxSeq, seq);
        this.options.onResult(p.target, seq, p.rttMs !== null && p.rttMs <= this.options.timeoutMs ? p.rttMs : null);
        this.closeGaps(p.target, seq, p.rttMs === null);
      },
      () => {
        this.proc = null;
        if (this.stopped) return;
        // fping exits when its interface or source address is missing: try again later.
        this.restart = setTimeout(() => this.start(), RESTART_MS);
        this.restart.unref();
      },
    );
  }

  /**
   * fping prints nothing for a probe it could not send (e.g. no route, or a
   * local firewall drop): such a gap is a loss too. fping reports each target
   * in sequence order, so after a time-out line for `seq` every earlier
   * unreported probe is lost; after an answer, those sent more than one
   * time-out earlier are.
   */
  private closeGaps(target: string, seq: number, timedOut: boolean): void {
    const book = this.books.get(target) ?? { next: this.base, done: new Set<number>() };
    this.books.set(target, book);
    if (book.next < this.base) book.next = this.base;
    book.done.add(seq);
    const inFlight = Math.ceil(this.options.timeoutMs / this.options.intervalMs);
    const limit = timedOut ? seq : seq - inFlight - 1;
    while (book.next <= limit) {
      if (!book.done.delete(book.next)) this.options.onResult(target, book.next, null);
      book.next++;
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.restart) clearTimeout(this.restart);
    this.proc?.stop();
    this.proc = null;
  }
}
