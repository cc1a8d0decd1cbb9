/**
 * A stopwatch made of the kernel's own announcements: `ip -o -ts monitor link
 * address route` inside a router's namespace prints every link, address and
 * route change with a microsecond timestamp as it hears it. The time from the
 * event that broke a WAN (carrier lost, address deleted) to the route change
 * that moved traffic is the agent's reaction, with no polling in the figure.
 *
 * The timestamps are taken when `ip` reads the event, not by the kernel: on a
 * loaded machine a monitor that waits for the CPU reads a burst late and
 * stamps it all at once. So the monitor runs under SCHED_FIFO (`chrt -f 50`,
 * root), which wakes it as soon as the kernel queues an event.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface MonitorLine {
  /** Epoch ms with microseconds (the timestamps carry no zone; only differences are used). */
  at: number;
  text: string;
}

export class KernelMonitor {
  readonly lines: MonitorLine[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(ns: string) {
    this.child = spawn(
      "ip",
      ["netns", "exec", ns, "chrt", "-f", "50", "ip", "-o", "-ts", "monitor", "link", "address", "route"],
      {
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    let rest = "";
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => {
      rest += chunk;
      const parts = rest.split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) {
        const m = /^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{6})\]\s*(.*)$/.exec(p);
        if (m) this.lines.push({ at: Date.parse(`${m[1]}Z`) + Number(m[2]) / 1000, text: m[3]! });
      }
    });
    this.exited = new Promise((r) => this.child.once("exit", () => r()));
  }

  /** Lets the monitor subscribe before the first change is made. */
  async ready(): Promise<void> {
    await new Promise((r) => setTimeout(r, 300));
  }

  /** Index to search from (lines so far). */
  mark(): number {
    return this.lines.length;
  }

  /** The first line at or after `from` matching `re`. */
  find(re: RegExp, from = 0): MonitorLine | null {
    return this.lines.slice(from).find((l) => re.test(l.text)) ?? null;
  }

  /** Milliseconds from the first `cause` line after `from` to the first `effect` line after it; null if either is missing. */
  between(cause: RegExp, effect: RegExp, from = 0): number | null {
    const i = this.lines.findIndex((l, n) => n >= from && cause.test(l.text));
    if (i < 0) return null;
    const e = this.find(effect, i);
    return e ? e.at - this.lines[i]!.at : null;
  }

  async stop(): Promise<void> {
    this.child.kill("SIGTERM");
    await this.exited;
  }
}

/** The monitor line of a WAN losing its carrier, and of its IPv4 address being deleted. */
export const carrierLost = (dev: string) => new RegExp(`^\\d+: ${dev}(@\\S+)?: <[^>]*NO-CARRIER`);
export const addressDeleted = (dev: string) => new RegExp(`^Deleted \\d+: ${dev}\\s+inet `);
/** The monitor line of a policy table's default route pointing at `dev`. */
export const tableRouteVia = (table: number, dev: string) => new RegExp(`^default via \\S+ dev ${dev} table ${table}\\b`);
