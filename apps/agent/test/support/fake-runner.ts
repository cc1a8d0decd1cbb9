/**
 * A recording fake Runner: every argv is recorded, answers come from handlers
 * matched on an argv prefix (latest registered wins), unmatched commands
 * succeed with empty output. Tests assert on the recorded commands, and on
 * `mutating()` for "same config twice → nothing changed".
 */
import type { Runner, RunOptions, RunResult } from "../../src/runner.ts";
import { CommandError } from "../../src/runner.ts";

export type Handler = (argv: string[], options: RunOptions) => Partial<RunResult> | Promise<Partial<RunResult>>;

/** Commands that only read state. */
export function isReadOnly(argv: readonly string[]): boolean {
  const [cmd, ...rest] = argv;
  const words = rest.filter((w) => !w.startsWith("-"));
  if (cmd === "nft") return words[0] === "list" || rest.includes("-c");
  if (cmd === "ip") return words[1] === undefined || ["show", "list", "get"].includes(words[1]);
  if (cmd === "tc") return ["show", "list"].includes(words[1] ?? "show");
  if (cmd === "sysctl") return !rest.includes("-w");
  return ["cat", "ping", "traceroute", "fping", "conntrack"].includes(cmd ?? "");
}

export class FakeRunner implements Runner {
  readonly calls: { argv: string[]; options: RunOptions }[] = [];
  private readonly handlers: { prefix: string[]; fn: Handler }[] = [];

  /** Answers commands starting with `prefix`. */
  on(prefix: string[], fn: Handler): this {
    this.handlers.unshift({ prefix, fn });
    return this;
  }

  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ argv: [...argv], options });
    const h = this.handlers.find((x) => x.prefix.every((p, i) => argv[i] === p));
    const partial = h ? await h.fn(argv, options) : {};
    const result: RunResult = {
      argv,
      exitCode: partial.exitCode ?? 0,
      stdout: partial.stdout ?? "",
      stderr: partial.stderr ?? "",
    };
    if (result.exitCode !== 0 && !options.allowFailure) throw new CommandError(result);
    return result;
  }

  /** Recorded argv lines joined with spaces. */
  commands(): string[] {
    return this.calls.map((c) => c.argv.join(" "));
  }

  /** Recorded commands that change the system. */
  mutating(): string[] {
    return this.calls.filter((c) => !isReadOnly(c.argv)).map((c) => c.argv.join(" "));
  }

  clear(): void {
    this.calls.length = 0;
  }
}
