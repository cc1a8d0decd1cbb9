/**
 * What every read-only request to one device (its logs, a diagnostic) does first, in one transaction: the
 * device must be the caller's organization's (else 404 NOT_FOUND, before anything is audited or sent), and who
 * asked what of it is audited before the request goes out, so a request that then fails is audited too.
 */
import { notFound } from "../../../http/errors.ts";
import { recordAudit } from "../../audit.ts";
import { inTransaction, type ServiceCtx } from "../../context.ts";

export async function auditDeviceRequest(
  ctx: ServiceCtx,
  deviceId: string,
  audit: { action: string; after: unknown },
): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const device = await tx.db
      .selectFrom("devices")
      .select("id")
      .where("id", "=", deviceId)
      .where("organization_id", "=", tx.org.id)
      .executeTakeFirst();
    if (!device) throw notFound("device");
    await recordAudit(tx, { action: audit.action, resource: "devices", resourceId: deviceId, after: audit.after });
  });
}
