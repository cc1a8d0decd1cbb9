/** Which lab a command means: a lab name, a topology file (its `name:`), or the only lab there is. */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { LabError, LabErrorCode } from "../errors.ts";
import { loadTopology } from "../topology/index.ts";

/** Names of labs with a state file under stateRoot. */
export async function labNames(stateRoot: string): Promise<string[]> {
  const entries = await readdir(stateRoot).catch(() => [] as string[]);
  const names: string[] = [];
  for (const e of entries.filter((x) => !x.startsWith(".")).sort()) {
    if (
      await stat(join(stateRoot, e, "state.json")).then(
        () => true,
        () => false,
      )
    )
      names.push(e);
    else if (
      await stat(join(stateRoot, e, "lock")).then(
        () => true,
        () => false,
      )
    )
      names.push(e); // crashed before its first state write
  }
  return names;
}

export async function resolveLabName(stateRoot: string, arg: string | undefined): Promise<string> {
  if (arg) {
    if (/\.ya?ml$/.test(arg)) return (await loadTopology(arg)).topology.name;
    return arg;
  }
  const names = await labNames(stateRoot);
  if (names.length === 1) return names[0]!;
  if (names.length === 0) throw new LabError(LabErrorCode.LAB_NOT_FOUND, `no lab is up (state root ${stateRoot})`);
  throw new LabError(LabErrorCode.LAB_AMBIGUOUS, `several labs are up: ${names.join(", ")}; name one`);
}
