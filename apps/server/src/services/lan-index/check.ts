/**
 * The LAN overlaps a device change creates, asked through the GiST index:
 * only the devices whose networks overlap the device's stored or new networks
 * are loaded and compared. A device overlapping neither cannot appear in
 * either side of the comparison, so the answer is the one `checkLanOverlap`
 * gives against every device of the organization (in the order of the ids).
 */

import type { Db } from "../../db/schema.ts";
import { checkLanOverlap, type OverlapDevice, type OverlapVrrpGroup, type Problem } from "../../validate/index.ts";
import { anyUuid } from "../desired-config.ts";
import { lanProbes } from "./rows.ts";
import { overlappingDeviceIds } from "./store.ts";

type Indexable = OverlapDevice & Parameters<typeof lanProbes>[0];

/**
 * Problems `after` has that `before` (the device as stored) did not: an overlap accepted earlier with
 * allowOverlapping=true does not block later edits.
 */
export async function newLanOverlaps(
  db: Db,
  orgId: string,
  before: Indexable,
  after: Indexable,
  groups: readonly OverlapVrrpGroup[],
): Promise<Problem[]> {
  const ids = await overlappingDeviceIds(db, orgId, after.id, [...lanProbes(before), ...lanProbes(after)]);
  if (ids.length === 0) return [];
  const others = await db
    .selectFrom("devices")
    .select(["id", "name", "interfaces", "firewall"])
    .where("organization_id", "=", orgId)
    .where("id", "=", anyUuid(ids))
    .orderBy("id")
    .execute();
  return newProblems(before, after, others, groups);
}

/** The comparison itself, over whichever devices are given (the index's candidates, or all of them). */
export function newProblems(
  before: OverlapDevice,
  after: OverlapDevice,
  others: readonly OverlapDevice[],
  groups: readonly OverlapVrrpGroup[],
): Problem[] {
  const existing = new Set(checkLanOverlap(before, others, groups).map((p) => p.message));
  return checkLanOverlap(after, others, groups).filter((p) => !existing.has(p.message));
}
