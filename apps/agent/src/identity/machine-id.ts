/**
 * The machine id the device registers and says hello with. System mode uses
 * /etc/machine-id (stable across re-installs of the agent); standalone mode,
 * where many agents share one host in namespaces, and hosts without one use
 * an id generated once and kept in the state dir.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { DaemonMode } from "../drivers/driver.ts";
import { writeFileAtomic } from "../fs.ts";

const VALID = /^[A-Za-z0-9._:-]{8,200}$/;

export async function machineId(mode: DaemonMode, stateFile: string, systemFile = "/etc/machine-id"): Promise<string> {
  if (mode === "system") {
    const system = (await readFile(systemFile, "utf8").catch(() => "")).trim();
    if (VALID.test(system)) return system;
  }
  const kept = (await readFile(stateFile, "utf8").catch(() => "")).trim();
  if (VALID.test(kept)) return kept;
  const generated = randomUUID();
  await writeFileAtomic(stateFile, `${generated}\n`, 0o644);
  return generated;
}
