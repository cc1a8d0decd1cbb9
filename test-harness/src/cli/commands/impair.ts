import { LabError, LabErrorCode } from "../../errors.ts";
import { formatImpairment } from "../../lab/impair/index.ts";
import { Lab } from "../../lab/lab.ts";
import type { Impairment } from "../../topology/schema.ts";
import type { CliContext } from "../context.ts";
import { resolveLabName } from "../resolve.ts";

export interface ImpairFlags {
  loss?: string;
  delay?: string;
  jitter?: string;
  rate?: string;
  clear: boolean;
}

function num(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n)) throw new LabError(LabErrorCode.USAGE, `--${flag} needs a number, got '${v}'`);
  return n;
}

/** Flags to a partial impairment; `--rate none` (or 0) removes the rate limit. */
export function impairmentChange(f: ImpairFlags): Partial<Impairment> {
  const rate = f.rate === undefined ? undefined : f.rate === "none" || f.rate === "0" ? null : num("rate", f.rate);
  return { lossPercent: num("loss", f.loss), delayMs: num("delay", f.delay), jitterMs: num("jitter", f.jitter), rateMbit: rate };
}

export async function impairCommand(
  ctx: CliContext,
  labArg: string | undefined,
  link: string,
  flags: ImpairFlags,
): Promise<void> {
  const change = impairmentChange(flags);
  if (!flags.clear && Object.values(change).every((v) => v === undefined)) {
    throw new LabError(LabErrorCode.USAGE, "impair needs at least one of --loss --delay --jitter --rate, or --clear");
  }
  const lab = await Lab.open(ctx.stateRoot, await resolveLabName(ctx.stateRoot, labArg));
  const t0 = performance.now();
  const applied = await lab.impair(link, change, { clear: flags.clear });
  for (const [id, i] of Object.entries(applied)) ctx.out(`${id}: ${formatImpairment(i)}`);
  ctx.out(`applied in ${((performance.now() - t0) / 1000).toFixed(3)}s with ${lab.store.state.impairment?.backend ?? "?"}`);
}
