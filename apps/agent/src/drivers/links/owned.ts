/**
 * What the links driver changed on the system, so it only ever undoes its own
 * changes: the addresses it added and the MTUs it changed (with the value to
 * restore). Routes need no record: they carry the agent's route protocol.
 * Written before each change that adds something (write-ahead), so a crash
 * between the command and the record cannot leave an address nobody owns.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import * as z from "zod";
import { writeFileAtomic } from "../../fs.ts";

export const OwnedLinks = z.object({
  version: z.literal(1),
  addresses: z.array(z.object({ dev: z.string(), cidr: z.string() })),
  /** Interface → MTU it had before the agent changed it. */
  mtu: z.record(z.string(), z.number().int()),
});
export type OwnedLinks = z.infer<typeof OwnedLinks>;

export const emptyOwned = (): OwnedLinks => ({ version: 1, addresses: [], mtu: {} });

export function ownedPath(stateDir: string): string {
  return join(stateDir, "links", "owned.json");
}

export async function loadOwned(stateDir: string): Promise<OwnedLinks> {
  const text = await readFile(ownedPath(stateDir), "utf8").catch(() => null);
  if (text === null) return emptyOwned();
  const parsed = OwnedLinks.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${ownedPath(stateDir)} is damaged: ${parsed.error.message}`);
  return parsed.data;
}

export async function saveOwned(stateDir: string, owned: OwnedLinks): Promise<void> {
  const sorted: OwnedLinks = {
    version: 1,
    addresses: [...owned.addresses].sort((a, b) => `${a.dev} ${a.cidr}`.localeCompare(`${b.dev} ${b.cidr}`)),
    mtu: Object.fromEntries(Object.entries(owned.mtu).sort(([a], [b]) => a.localeCompare(b))),
  };
  await writeFileAtomic(ownedPath(stateDir), `${JSON.stringify(sorted, null, 2)}\n`, 0o644);
}
