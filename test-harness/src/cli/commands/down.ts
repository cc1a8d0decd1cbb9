import { labDown } from "../../lab/down.ts";
import { formatPhase } from "../../lab/progress.ts";
import type { CliContext } from "../context.ts";
import { resolveLabName } from "../resolve.ts";

export async function downCommand(ctx: CliContext, arg: string | undefined): Promise<void> {
  const name = await resolveLabName(ctx.stateRoot, arg);
  ctx.out(`lab down ${name}`);
  const r = await labDown(ctx.stateRoot, name, (e) => ctx.out(formatPhase(e)));
  if (!r.found) ctx.out(`lab '${name}' is not up: nothing to do`);
  else
    ctx.out(`lab '${name}' removed in ${(r.totalMs / 1000).toFixed(2)}s (${r.processes} processes, ${r.namespaces} namespaces)`);
}
