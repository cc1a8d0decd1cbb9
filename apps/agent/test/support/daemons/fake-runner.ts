/**
 * A recording fake Runner for config-sequence tests: every argv is recorded,
 * answers come from handlers matched on the joined argv (latest handler
 * first), and unmatched commands succeed with empty output.
 */
import { CommandError, type Runner, type RunOptions, type RunResult } from "../../../src/runner.ts";

export interface RecordedCall {
  argv: string[];
  env?: Record<string, string>;
  input?: string;
}

export type Reply = Partial<Omit<RunResult, "argv">>;
export type Handler = (argv: string[], options: RunOptions) => Reply | undefined | Promise<Reply | undefined>;

export class FakeRunner implements Runner {
  readonly calls: RecordedCall[] = [];
  private readonly handlers: { match: (line: string, argv: string[]) => boolean; handler: Handler }[] = [];

  /** Answers commands whose space-joined argv matches `match`; a handler returning undefined passes to older ones. */
  on(match: RegExp | ((argv: string[]) => boolean), reply: Reply | Handler): this {
    const test = match instanceof RegExp ? (line: string) => match.test(line) : (_: string, argv: string[]) => match(argv);
    this.handlers.unshift({ match: test, handler: typeof reply === "function" ? reply : () => reply });
    return this;
  }

  async run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ argv, env: options.env, input: options.input });
    const line = argv.join(" ");
    let reply: Reply | undefined;
    for (const h of this.handlers) {
      if (!h.match(line, argv)) continue;
      reply = await h.handler(argv, options);
      if (reply) break;
    }
    const result: RunResult = { argv, exitCode: reply?.exitCode ?? 0, stdout: reply?.stdout ?? "", stderr: reply?.stderr ?? "" };
    if (result.exitCode !== 0 && !options.allowFailure) throw new CommandError(result);
    return result;
  }

  /** Recorded argv lines, space-joined. */
  lines(): string[] {
    return this.calls.map((c) => c.argv.join(" "));
  }

  clear(): void {
    this.calls.length = 0;
  }
}
