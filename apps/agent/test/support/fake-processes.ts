/**
 * A fake process table on top of FakeRunner: commands that start a daemon
 * make a process appear (its pid written to the pid file the command names),
 * `ps -o stat=,comm= -p PID` answers from the table and `kill -s TERM|KILL`
 * removes the process. Enough for the supervisor to start, find, signal and
 * stop daemons without running any.
 */
import { writeFile } from "node:fs/promises";
import type { FakeRunner } from "./daemons/fake-runner.ts";

/** The argument after `flag` in argv. */
export function argAfter(argv: string[], flag: string): string {
  const i = argv.indexOf(flag);
  const v = i >= 0 ? argv[i + 1] : undefined;
  if (v === undefined) throw new Error(`no ${flag} in ${argv.join(" ")}`);
  return v;
}

export class FakeProcesses {
  private nextPid = 40_000;
  readonly alive = new Map<number, string>();
  readonly signals: { pid: number; signal: string }[] = [];
  private readonly onExit = new Map<string, () => void>();

  constructor(private readonly fake: FakeRunner) {
    fake.on(/^ps -o stat=,comm= -p \d+$/, (argv) => {
      const comm = this.alive.get(Number(argv.at(-1)));
      return comm ? { stdout: `Ss   ${comm}\n` } : { exitCode: 1 };
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
      await writeFile(pidFile(argv), `${pid}\n`);
      hooks.start?.();
      return {};
    });
    return this;
  }

  private exit(pid: number): void {
    const comm = this.alive.get(pid);
    this.alive.delete(pid);
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
