/**
 * A fake process table on top of FakeRunner: commands that start a daemon
 * make a process appear (its pid written to the pid file the command names),
 * `ps -o stat=,comm= -p PID` and `ps -o stat=,args= -p PID` answer from the
 * table and `kill -s TERM|KILL` removes the process. Enough for the
 * supervisor to start, find, signal and stop daemons, and for the links
 * driver to run its dhclients, without running any.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import type { FakeRunner } from "./fake-runner.ts";

/** The argument after `flag` in argv. */
export function argAfter(argv: string[], flag: string): string {
  const i = argv.indexOf(flag);
  const v = i >= 0 ? argv[i + 1] : undefined;
  if (v === undefined) throw new Error(`no ${flag} in ${argv.join(" ")}`);
  return v;
}

export class FakeProcesses {
  private nextPid = 40_000;
  /** pid → command name. */
  readonly alive = new Map<number, string>();
  /** pid → the command line that started it. */
  private readonly args = new Map<number, string>();
  readonly signals: { pid: number; signal: string }[] = [];
  private readonly onExit = new Map<string, () => void>();

  constructor(private readonly fake: FakeRunner) {
    fake.on(/^ps -o stat=,(comm|args)= -p \d+$/, (argv) => {
      const pid = Number(argv.at(-1));
      const comm = this.alive.get(pid);
      if (!comm) return { exitCode: 1 };
      return { stdout: `Ss   ${argv[2]?.includes("args") ? this.args.get(pid) : comm}\n` };
    });
    fake.on(/^kill -s \S+ \d+$/, (argv) => {
      const signal = argv[2] ?? "";
      const pid = Number(argv[3]);
      if (!this.alive.has(pid)) return { exitCode: 1, stderr: "No such process" };
      this.signals.push({ pid, signal });
      if (signal === "TERM" || signal === "KILL") this.exit(pid);
      return {};
    });
  }

  /**
   * A command matching `match` starts a process named `comm` whose pid goes
   * to `pidFile(argv)`; `hooks` model what the daemon does to the system.
   */
  daemon(
    match: RegExp,
    comm: string,
    pidFile: (argv: string[]) => string,
    hooks: { start?: () => void; exit?: () => void } = {},
  ): this {
    if (hooks.exit) this.onExit.set(comm, hooks.exit);
    this.fake.on(match, async (argv) => {
      const pid = this.nextPid++;
      this.alive.set(pid, comm);
      this.args.set(pid, argv.join(" "));
      await writeFile(pidFile(argv), `${pid}\n`);
      hooks.start?.();
      return {};
    });
    return this;
  }

  /**
   * dhclient as the links driver runs it: `-nw` starts one (pid in `-pf`),
   * `-x` stops the one whose pid file it names and removes that file.
   */
  dhclient(): this {
    this.daemon(/^dhclient -4 -nw /, "dhclient", (a) => argAfter(a, "-pf"));
    this.fake.on(/^dhclient -4 -x /, async (argv) => {
      const pf = argAfter(argv, "-pf");
      const pid = Number.parseInt(await readFile(pf, "utf8").catch(() => ""), 10);
      if (this.alive.has(pid)) this.exit(pid);
      await rm(pf, { force: true });
      return { stdout: "Killed old client process\n" };
    });
    return this;
  }

  private exit(pid: number): void {
    const comm = this.alive.get(pid);
    this.alive.delete(pid);
    this.args.delete(pid);
    if (comm && this.pids(comm).length === 0) this.onExit.get(comm)?.();
  }

  /** Pids of running processes named `comm`. */
  pids(comm: string): number[] {
    return [...this.alive].filter(([, c]) => c === comm).map(([p]) => p);
  }

  /** Makes every process named `comm` vanish, as a crash would. */
  crash(comm: string): void {
    for (const pid of this.pids(comm)) this.exit(pid);
  }
}
