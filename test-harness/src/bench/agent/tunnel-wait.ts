/** Waits until a ping between the tunnel loopbacks crosses the IKEv2 tunnel (router A → router B). */
import { run } from "@tern/netlab";
import { sleep } from "../cases/util.ts";
import { TUNNEL_LOOPBACKS } from "./configs.ts";
import type { LabRouter } from "./lab.ts";

/** Resolves with performance.now() of the first answered probe; throws after `timeoutMs`. */
export async function tunnelAnswers(a: LabRouter, timeoutMs = 60_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const r = await run(
      ["ip", "netns", "exec", a.ns.name, "fping", "-c", "1", "-t", "100", "-q", "-S", TUNNEL_LOOPBACKS.a, TUNNEL_LOOPBACKS.b],
      { allowFailure: true, timeoutMs: 5000 },
    );
    if (r.exitCode === 0) return performance.now();
    if (performance.now() > deadline) throw new Error(`no answer over the tunnel within ${timeoutMs} ms`);
    await sleep(25);
  }
}
