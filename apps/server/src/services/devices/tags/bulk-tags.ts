/**
 * `POST /devices/tags`: add and remove tags on many devices (by ids or by
 * filter) in one transaction. Every device's resulting list is checked
 * against the per-device limit first: one device over it refuses the whole
 * request (400, naming the devices) and nothing changes. One audit entry
 * names the devices that changed and the tags.
 */
import { type DeviceTagsBulk, dedupeTags, MAX_TAGS_PER_DEVICE } from "@tern/protocol";
import { sql } from "kysely";
import { ApiError } from "../../../http/errors.ts";
import { recordAudit } from "../../audit.ts";
import { inTransaction, type ServiceCtx } from "../../context.ts";
import { anyUuid } from "../../desired-config.ts";
import { selectDeviceIds } from "../selection.ts";
import { tagsArray } from "./tags-sql.ts";

const CHUNK = 500;

/** The tag list after removing `remove` and adding `add` (added tags go last, in the order given). */
export function editTags(current: readonly string[], add: readonly string[], remove: readonly string[]): string[] {
  const removed = new Set(remove);
  return dedupeTags([...current.filter((t) => !removed.has(t)), ...add.filter((t) => !removed.has(t))]);
}

export async function editDeviceTags(ctx: ServiceCtx, input: DeviceTagsBulk): Promise<{ matched: number; changed: number }> {
  return inTransaction(ctx, async (tx) => {
    const ids = await selectDeviceIds(tx, input);
    const changes: { id: string; tags: string[] }[] = [];
    const tooMany: string[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = await tx.db
        .selectFrom("devices")
        .select(["id", "tags"])
        .where("organization_id", "=", tx.org.id)
        .where("id", "=", anyUuid(ids.slice(i, i + CHUNK)))
        .orderBy("id")
        .forUpdate()
        .execute();
      for (const row of rows) {
        const tags = editTags(row.tags, input.add, input.remove);
        if (tags.length > MAX_TAGS_PER_DEVICE) tooMany.push(row.id);
        else if (tags.join("\n") !== row.tags.join("\n")) changes.push({ id: row.id, tags });
      }
    }
    if (tooMany.length)
      throw new ApiError(
        "VALIDATION_FAILED",
        `${tooMany.length} of the devices would have more than ${MAX_TAGS_PER_DEVICE} tags; nothing changed`,
        tooMany
          .slice(0, 20)
          .map((id) => ({ path: "add", message: `device ${id} would have more than ${MAX_TAGS_PER_DEVICE} tags` })),
      );
    for (let i = 0; i < changes.length; i += CHUNK) {
      const chunk = changes.slice(i, i + CHUNK);
      await sql`update devices set tags = v.tags, updated_at = now()
        from (values ${sql.join(chunk.map((c) => sql`(${c.id}::uuid, ${tagsArray(c.tags)})`))}) as v(id, tags)
        where devices.id = v.id`.execute(tx.db);
    }
    if (changes.length)
      await recordAudit(tx, {
        action: "tags",
        resource: "devices",
        resourceId: null,
        after: { add: input.add, remove: input.remove, devices: changes.map((c) => c.id) },
      });
    return { matched: ids.length, changed: changes.length };
  });
}
