import { Lab } from "../../lab/lab.ts";
import { formatStatus, labStatus } from "../../lab/status.ts";
import type { CliContext } from "../context.ts";
import { labNames, resolveLabName } from "../resolve.ts";

export async function statusCommand(ctx: CliContext, arg: string | undefined, json: boolean): Promise<void> {
  if (!arg && (await labNames(ctx.stateRoot)).length > 1) {
    const names = await labNames(ctx.stateRoot);
    if (json) ctx.out(JSON.stringify({ labs: names }));
    else ctx.out(`labs up: ${names.join(", ")} (npm run lab -- status <name>)`);
    return;
  }
  const st = await labStatus(await Lab.open(ctx.stateRoot, await resolveLabName(ctx.stateRoot, arg)));
  if (json) ctx.out(JSON.stringify(st, null, 2));
  else for (const line of formatStatus(st)) ctx.out(line);
}
