import { formatPhase } from "../../lab/progress.ts";
import { labUp } from "../../lab/up.ts";
import type { CliContext } from "../context.ts";

export async function upCommand(
  ctx: CliContext,
  topology: string,
  o: { control: boolean; backend: string; port?: number; keep: boolean },
): Promise<void> {
  ctx.out(`lab up ${topology}${o.control ? "" : " (network only: --no-control)"}`);
  const r = await labUp(topology, {
    stateRoot: ctx.stateRoot,
    control: o.control,
    impairBackend: o.backend as "auto" | "netem" | "emulated",
    port: o.port,
    databaseUrl: ctx.databaseUrl,
    keepOnFailure: o.keep,
    progress: (e) => ctx.out(formatPhase(e)),
  });
  const lab = r.lab;
  ctx.out(`lab '${lab.name}' ${r.reused ? "converged" : "up"} in ${(r.totalMs / 1000).toFixed(2)}s (state: ${lab.dir})`);
  ctx.out(`impairment: ${r.impairment}`);
  if (r.control.started) {
    ctx.out(`management API: ${r.control.apiUrl}  (admin credentials in ${r.control.credentials})`);
  } else {
    ctx.out("control plane not started (--no-control); it would run:");
    for (const line of r.control.lines) ctx.out(`  ${line}`);
  }
  ctx.out(`next: npm run lab -- status | exec <node> | impair <link> --loss 5 --delay 30 | down`);
}
