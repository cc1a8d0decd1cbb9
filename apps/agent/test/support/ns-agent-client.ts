/** Starts test/support/ns-agent.ts inside a namespace and talks to it line by line. */
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";

const agentDir = fileURLToPath(new URL("../..", import.meta.url));

export class NsAgent {
  private readonly child: ResultPromise;
  private nextId = 1;
  private buf = "";
  private readonly waiting = new Map<number, (r: { ok: boolean; result?: unknown; error?: string }) => void>();

  constructor(netns: string, env: Record<string, string> = {}) {
    this.child = execa("ip", ["netns", "exec", netns, process.execPath, "--import", "tsx", "test/support/ns-agent.ts"], {
      cwd: agentDir,
      reject: false,
      buffer: false,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
      env: { LC_ALL: "C", ...env },
    });
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.buf += String(chunk);
      let nl = this.buf.indexOf("\n");
      while (nl >= 0) {
        const msg = JSON.parse(this.buf.slice(0, nl)) as { id: number; ok: boolean };
        this.buf = this.buf.slice(nl + 1);
        this.waiting.get(msg.id)?.(msg);
        this.waiting.delete(msg.id);
        nl = this.buf.indexOf("\n");
      }
    });
  }

  async call<T = unknown>(cmd: string, extra: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    const reply = new Promise<{ ok: boolean; result?: unknown; error?: string }>((resolve) => this.waiting.set(id, resolve));
    this.child.stdin?.write(`${JSON.stringify({ id, cmd, ...extra })}\n`);
    const r = await Promise.race([
      reply,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`ns-agent: no answer to ${cmd}`)), 30_000)),
    ]);
    if (!r.ok) throw new Error(`ns-agent ${cmd}: ${r.error}`);
    return r.result as T;
  }

  async stop(): Promise<void> {
    await this.call("stop").catch(() => {});
    await Promise.race([this.child, new Promise((r) => setTimeout(r, 2000))]);
    this.child.kill("SIGKILL");
  }
}
