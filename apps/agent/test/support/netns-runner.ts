/** A real Runner whose commands run inside one network namespace (`ip netns exec NS …`). */
import { ExecRunner, type Runner, type RunOptions, type RunResult } from "../../src/runner.ts";

export class NetnsRunner implements Runner {
  private readonly inner = new ExecRunner();
  readonly calls: string[][] = [];
  constructor(readonly netns: string) {}
  run(argv: string[], options?: RunOptions): Promise<RunResult> {
    this.calls.push(argv);
    return this.inner.run(["ip", "netns", "exec", this.netns, ...argv], options);
  }
}
