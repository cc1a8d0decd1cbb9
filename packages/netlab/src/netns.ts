/**
 * Throw-away network namespaces for privileged tests and labs. A NetnsScope
 * remembers every namespace and process it made and removes them all in
 * cleanup(), so a failing test leaves nothing behind.
 */
import { randomBytes } from "node:crypto";
import { execa, type ResultPromise } from "execa";

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Runs argv (no shell) and throws with argv, exit code and stderr on failure unless allowFailure. */
export async function run(
  argv: string[],
  opts: { allowFailure?: boolean; timeoutMs?: number; input?: string } = {},
): Promise<ExecResult> {
  const [file, ...args] = argv;
  if (!file) throw new Error("run: empty argv");
  const r = await execa(file, args, {
    reject: false,
    timeout: opts.timeoutMs ?? 30_000,
    input: opts.input,
    env: { LC_ALL: "C" },
  });
  const result = { stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? ""), exitCode: r.exitCode ?? 1 };
  if (result.exitCode !== 0 && !opts.allowFailure)
    throw new Error(`${argv.join(" ")}: exit ${result.exitCode}: ${result.stderr.trim() || result.stdout.trim()}`);
  return result;
}

/** One network namespace. */
export class Netns {
  constructor(readonly name: string) {}

  /** Runs argv inside the namespace. */
  exec(argv: string[], opts?: { allowFailure?: boolean; timeoutMs?: number; input?: string }): Promise<ExecResult> {
    return run(["ip", "netns", "exec", this.name, ...argv], opts);
  }

  /** The argv prefix that runs a command inside this namespace. */
  prefix(): string[] {
    return ["ip", "netns", "exec", this.name];
  }

  async addAddress(ifname: string, cidr: string): Promise<void> {
    await run(["ip", "-n", this.name, "addr", "add", cidr, "dev", ifname]);
  }

  async up(ifname: string): Promise<void> {
    await run(["ip", "-n", this.name, "link", "set", ifname, "up"]);
  }

  async sysctl(key: string, value: string): Promise<void> {
    await run(["ip", "netns", "exec", this.name, "sysctl", "-qw", `${key}=${value}`]);
  }

  /** Waits until `check` resolves true, polling every `intervalMs`; throws after `timeoutMs` naming `what`. */
  static async waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 10_000, intervalMs = 50): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** Names of every network namespace on the host (`ip netns list`). */
export async function listNetns(): Promise<string[]> {
  const r = await run(["ip", "netns", "list"]);
  return r.stdout
    .split("\n")
    .map((line) => line.split(" ")[0] ?? "")
    .filter(Boolean);
}

/** Kills every process still inside a namespace, then deletes it; a missing namespace is fine. */
export async function deleteNetns(name: string): Promise<void> {
  // Daemons started by the code under test (not by spawn) die with their namespace's pids.
  const pids = await run(["ip", "netns", "pids", name], { allowFailure: true });
  for (const pid of pids.stdout.split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // already gone
    }
  }
  await run(["ip", "netns", "del", name], { allowFailure: true });
}

/** Namespaces and processes made for one test file or lab, removed together. */
export class NetnsScope {
  readonly id: string;
  private readonly namespaces: Netns[] = [];
  private readonly processes: ResultPromise[] = [];

  /**
   * @param label short tag in namespace names, so leftovers say who made them.
   * @param id reopens the scope of an earlier process (a lab that outlives the
   *   command that built it); a new random id when omitted.
   */
  constructor(
    readonly label: string,
    id?: string,
  ) {
    this.id = id ?? randomBytes(3).toString("hex");
  }

  /** The full name `tn-<label>-<id>-<name>` (truncated to fit) that netns(name) creates. */
  nameOf(name: string): string {
    return `tn-${this.label}-${this.id}-${name}`.slice(0, 48);
  }

  /**
   * Creates a namespace named nameOf(name) with lo up. With `reuse`, an
   * existing namespace of that name is adopted instead of being an error.
   */
  async netns(name: string, opts: { reuse?: boolean } = {}): Promise<Netns> {
    const full = this.nameOf(name);
    const added = await run(["ip", "netns", "add", full], { allowFailure: opts.reuse });
    if (added.exitCode !== 0 && !(await listNetns()).includes(full)) {
      throw new Error(`ip netns add ${full}: exit ${added.exitCode}: ${added.stderr.trim()}`);
    }
    const ns = new Netns(full);
    this.namespaces.push(ns);
    await ns.up("lo");
    return ns;
  }

  /** Namespaces on the host that belong to this scope (by name prefix), including ones made by an earlier process. */
  async existing(): Promise<string[]> {
    const prefix = this.nameOf("");
    return (await listNetns()).filter((n) => n.startsWith(prefix));
  }

  /** A veth pair with one end in each namespace (names must be 2–15 characters). */
  async veth(a: Netns, ifA: string, b: Netns, ifB: string): Promise<void> {
    await run(["ip", "link", "add", ifA, "netns", a.name, "type", "veth", "peer", "name", ifB, "netns", b.name]);
    await a.up(ifA);
    await b.up(ifB);
  }

  /** Starts a long-running process inside `ns`; it is killed in cleanup(). */
  spawn(ns: Netns, argv: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): ResultPromise {
    const child = execa("ip", ["netns", "exec", ns.name, ...argv], {
      reject: false,
      env: { LC_ALL: "C", ...opts.env },
      cwd: opts.cwd,
      stdin: "ignore",
      buffer: false,
      stdout: "pipe",
      stderr: "pipe",
    });
    this.processes.push(child);
    return child;
  }

  /** Kills every process still running inside the scope's namespaces, then deletes the namespaces. */
  async cleanup(): Promise<void> {
    for (const child of this.processes) child.kill("SIGTERM");
    await Promise.allSettled(this.processes.map((c) => Promise.race([c, new Promise((r) => setTimeout(r, 3000))])));
    for (const child of this.processes) child.kill("SIGKILL");
    for (const ns of this.namespaces) await deleteNetns(ns.name);
    this.namespaces.length = 0;
    this.processes.length = 0;
  }
}
