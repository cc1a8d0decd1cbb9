/**
 * Agent packages the operator uploaded (account-wide). The bytes are kept in agent_packages.content (bytea, so
 * any instance can send them to a device); the server recomputes the SHA-256 and checks the Ed25519 signature
 * against the account's registered keys before it stores anything. The agent checks both again against its own
 * trusted keys: the server's check only keeps garbage out, it is not what the device relies on.
 */
import { randomUUID } from "node:crypto";
import { type AgentPackage, AgentPackageSignature } from "@tern/protocol";
import { ApiError, notFound } from "../../http/errors.ts";
import { recordAudit } from "../audit.ts";
import { inTransaction, type ServiceCtx } from "../context.ts";
import { sha256Hex, verifyPackageSignature } from "./signature.ts";

export const PACKAGE_COLUMNS = [
  "id",
  "version",
  "size_bytes",
  "sha256",
  "signature",
  "signing_key_id",
  "uploaded_by",
  "created_at",
] as const;

type Row = {
  id: string;
  version: string;
  size_bytes: number;
  sha256: string;
  signature: string;
  signing_key_id: string;
  uploaded_by: string;
  created_at: Date;
};

export const toAgentPackage = (r: Row): AgentPackage => ({
  id: r.id,
  version: r.version,
  size: r.size_bytes,
  sha256: r.sha256,
  signature: r.signature,
  signingKey: r.signing_key_id,
  uploadedBy: r.uploaded_by,
  createdAt: r.created_at.toISOString(),
});

/** The signature file's fields as upload takes them (headers), checked by the protocol's schema. */
export function parseSignatureHeaders(headers: {
  version?: string | undefined;
  sha256?: string | undefined;
  signature?: string | undefined;
  publicKey?: string | undefined;
}): AgentPackageSignature {
  const parsed = AgentPackageSignature.safeParse(headers);
  if (!parsed.success)
    throw new ApiError(
      "VALIDATION_FAILED",
      "the package's version, sha256, signature and publicKey headers are required and well-formed",
      parsed.error.issues.map((i) => ({ path: `x-tern-package-${String(i.path[0] ?? "")}`, message: i.message })),
    );
  return parsed.data;
}

/** Checks and stores a package; 400 PACKAGE_CHECKSUM_MISMATCH / PACKAGE_SIGNATURE_INVALID, 409 PACKAGE_VERSION_EXISTS. */
export async function uploadAgentPackage(ctx: ServiceCtx, sig: AgentPackageSignature, content: Buffer): Promise<AgentPackage> {
  if (content.length === 0) throw new ApiError("VALIDATION_FAILED", "the package is empty");
  const actual = sha256Hex(content);
  if (actual !== sig.sha256)
    throw new ApiError("PACKAGE_CHECKSUM_MISMATCH", `the package's SHA-256 is ${actual}, not the signed ${sig.sha256}`);
  return inTransaction(ctx, async (tx) => {
    const key = await tx.db
      .selectFrom("agent_signing_keys")
      .select(["id", "public_key"])
      .where("account_id", "=", tx.org.accountId)
      .where("public_key", "=", sig.publicKey)
      .executeTakeFirst();
    if (!key) throw new ApiError("PACKAGE_SIGNATURE_INVALID", "the package is signed by a key not registered on this account");
    if (!verifyPackageSignature(key.public_key, sig.version, sig.sha256, sig.signature))
      throw new ApiError("PACKAGE_SIGNATURE_INVALID", "the package's signature does not verify with its key");
    const row = await tx.db
      .insertInto("agent_packages")
      .values({
        id: randomUUID(),
        account_id: tx.org.accountId,
        version: sig.version,
        size_bytes: content.length,
        sha256: actual,
        signature: sig.signature,
        signing_key_id: key.id,
        content,
        uploaded_by: tx.actor.label,
      })
      .onConflict((oc) => oc.columns(["account_id", "version"]).doNothing())
      .returning(PACKAGE_COLUMNS)
      .executeTakeFirst();
    if (!row) throw new ApiError("PACKAGE_VERSION_EXISTS", `a package of version ${sig.version} exists already`);
    await recordAudit(tx, {
      action: "agent_package_uploaded",
      resource: "accounts",
      resourceId: row.id,
      after: { version: row.version, size: row.size_bytes, sha256: row.sha256 },
    });
    return toAgentPackage(row);
  });
}

export async function listAgentPackages(ctx: ServiceCtx): Promise<AgentPackage[]> {
  const rows = await ctx.db
    .selectFrom("agent_packages")
    .select(PACKAGE_COLUMNS)
    .where("account_id", "=", ctx.org.accountId)
    .orderBy("created_at", "desc")
    .execute();
  return rows.map(toAgentPackage);
}

/** The account's package, or NOT_FOUND (another account's included). */
export async function agentPackageOf(ctx: Pick<ServiceCtx, "db" | "org">, id: string): Promise<Row> {
  const row = await ctx.db
    .selectFrom("agent_packages")
    .select(PACKAGE_COLUMNS)
    .where("id", "=", id)
    .where("account_id", "=", ctx.org.accountId)
    .executeTakeFirst();
  if (!row) throw notFound("agent package");
  return row;
}

/** Deletes a package; ROLLOUT_CONFLICT while a rollout that is not finished or cancelled uses it. */
export async function deleteAgentPackage(ctx: ServiceCtx, id: string): Promise<void> {
  await inTransaction(ctx, async (tx) => {
    const row = await tx.db
      .selectFrom("agent_packages")
      .select(["id", "version"])
      .where("id", "=", id)
      .where("account_id", "=", tx.org.accountId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound("agent package");
    const active = await tx.db
      .selectFrom("agent_rollouts")
      .select("id")
      .where("package_id", "=", id)
      .where("state", "in", ["running", "paused"])
      .executeTakeFirst();
    if (active) throw new ApiError("ROLLOUT_CONFLICT", `rollout ${active.id} uses this package: cancel it first`);
    // Finished and cancelled rollouts of the package go with it (their reports too).
    await tx.db.deleteFrom("agent_rollouts").where("package_id", "=", id).execute();
    await tx.db.deleteFrom("agent_packages").where("id", "=", id).execute();
    await recordAudit(tx, {
      action: "agent_package_deleted",
      resource: "accounts",
      resourceId: id,
      before: { version: row.version },
    });
  });
}
