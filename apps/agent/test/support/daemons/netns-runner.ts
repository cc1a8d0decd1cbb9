/**
 * A real Runner that runs every command inside one network namespace (as the
 * agent does when it is itself started with `ip netns exec`) and records the
 * argv it was given, so privileged tests can check that a re-apply mutates
 * nothing.
 */
import { ExecRunner, type Runner, type RunOptions, type RunResult } from "../../../src/runner.ts";

export class NetnsRunner implements Runner {
  readonly calls: { argv: string[] }[] = [];
  private readonly inner = new ExecRunner();

  constructor(readonly netns: string) {}

  async run(argv: string[], options?: RunOptions): Promise<RunResult> {
    this.calls.push({ argv });
    const r = await this.inner.run(["ip", "netns", "exec", this.netns, ...argv], options);
    return { ...r, argv };
  }

  clear(): void {
    this.calls.length = 0;
  }
}
