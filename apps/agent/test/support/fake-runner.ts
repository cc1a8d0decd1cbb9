/**
 * The recording fake Runner every driver test uses: each call is recorded
 * (argv and options), answers come from handlers (newest first) matched on an
 * argv prefix, a regular expression over the space-joined argv, or a
 * predicate; a handler that returns undefined passes the call on to older
 * ones. Unmatched commands succeed with empty output, or fail with 127 when
 * the runner is `strict` (a fake system that must model every command).
 * Models of kernel parts (FakeKernel, FakeNft, FakeTc, FakeProcesses)
 * register their handlers on it.
 */
import { CommandError, type Runner, type RunOptions, type RunResult } from "../../src/runner.ts";
import { mutatingCommands } from "./mutating.ts";

export interface RecordedCall {
  argv: string[];
  options: RunOptions;
}

export type Reply = Partial<Omit<RunResult, "argv">>;
export type Handler = (argv: string[], options: RunOptions) => Reply | undefined | Promise<Reply | undefined>;
export type Match = readonly string[] | RegExp | ((argv: string[]) => boolean);

function matcher(match: Match): (argv: string[], line: string) => boolean {
  if (match instanceof RegExp) return (_argv, line) => match.test(line);
  if (typeof match === "function") return (argv) => match(argv);
  return (argv) => match.every((w, i) => argv[i] === w);
}

/** What every recording runner of the tests offers: the calls, as text, and which of them changed the system. */
export abstract class RecordingRunner implements Runner {
  readonly calls: RecordedCall[] = [];

  abstract run(argv: string[], options?: RunOptions): Promise<RunResult>;

  /** Recorded commands, space-joined. */
  commands(): string[] {
    return this.calls.map((c) => c.argv.join(" "));
  }

  /** The same as `commands()`. */
  lines(): string[] {
    return this.commands();
  }

  /** Recorded commands that change the system (see mutating.ts). */
  mutating(): string[] {
    return mutatingCommands(this.calls);
  }

  /** Returns the mutating commands recorded so far and forgets every call. */
  takeMutating(): string[] {
    const out = this.mutating();
    this.clear();
    return out;
  }

  clear(): void {
    this.calls.length = 0;
  }
}

export class FakeRunner extends RecordingRunner {
  private readonly handlers: { match: (argv: string[], line: string) => boolean; handler: Handler }[] = [];

  constructor(private readonly options: { strict?: boolean } = {}) {
    super();
  }

  /** Answers matching commands; registered later wins. */
  on(match: Match, reply: Reply | Handler): this {
    this.handlers.unshift({ match: matcher(match), handler: typeof reply === "function" ? reply : () => reply });
    return this;
  }

  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ argv: [...argv], options });
    const line = argv.join(" ");
    let reply: Reply | undefined;
    for (const h of this.handlers) {
      if (!h.match(argv, line)) continue;
      reply = await h.handler(argv, options);
      if (reply) break;
    }
    if (!reply && this.options.strict) reply = { exitCode: 127, stderr: `fake runner: ${argv[0]}: command not modelled` };
    const result: RunResult = { argv, exitCode: reply?.exitCode ?? 0, stdout: reply?.stdout ?? "", stderr: reply?.stderr ?? "" };
    if (result.exitCode !== 0 && !options.allowFailure) throw new CommandError(result);
    return result;
  }
}
