/**
 * Onboarding: a device presents a registration token with its machine id,
 * hostname, interfaces, versions and its identity (an Ed25519 public key and
 * a fresh signature by it), and gets a device token back. A new device starts
 * unapproved; an admin approves it with `PUT /devices/{id}`.
 *
 * Which device a registration is (the organization's rows with its machine id
 * or its key, locked):
 * - a device holding the presented key: the same device registering again
 *   (agent restarted without its token, re-installed on the same disk). Its
 *   token is rotated, its discovered facts refreshed, its approval and the
 *   admin's settings kept. The signed time must be newer than the last one.
 * - else a pending device of the machine id without a key (identity reset by
 *   an admin, or registered before keys existed): it takes the key, and stays
 *   pending until approved (again).
 * - else a device of the machine id with another key (or an approved one
 *   without a key): an identity conflict. The registration becomes a new
 *   pending device of its own and never touches the known one; the conflict
 *   is audited and raised as the "device identity conflict" notification.
 * - else a new device.
 * No job is queued here: an unapproved device gets none, and re-registration
 * does not change an assigned interface.
 */
import { randomUUID } from "node:crypto";
import {
  Bgp,
  Firewall,
  REGISTER_PROOF_MAX_SKEW_MS,
  type RegisterRequest,
  type RegisterResponse,
  registerProofText,
} from "@tern/protocol";
import { sql } from "kysely";
import type { Actor } from "../../auth/access.ts";
import { hashSecretToken, newSecretToken, TOKEN_PREFIX } from "../../auth/secret-tokens.ts";
import { toJson } from "../../db/json.ts";
import type { Db } from "../../db/schema.ts";
import type { AppDeps } from "../../deps.ts";
import { ApiError } from "../../http/errors.ts";
import { assertDeviceRoom } from "../accounts/plan-limits.ts";
import { recordAudit } from "../audit.ts";
import { type ServiceCtx, systemCtx } from "../context.ts";
import { syncLanIndex } from "../lan-index/store.ts";
import { useRegistrationToken } from "../registration-tokens.ts";
import { verifyDeviceSignature } from "./identity/signatures.ts";
import { discoveredInterface, mergeDiscovered } from "./interfaces.ts";

type RegisterDeps = Pick<AppDeps, "db" | "config" | "keyring" | "logger" | "registerLimit" | "deviceLink">;

export interface Registered {
  /** True for a new device, false for a re-registration. */
  created: boolean;
  response: RegisterResponse;
}

const rateLimited = (seconds: number) =>
  new ApiError("RATE_LIMITED", `too many registrations from this address; try again in ${seconds} s`, [], {
    "retry-after": String(seconds),
  });

const proofInvalid = (message: string) => new ApiError("IDENTITY_PROOF_INVALID", message, [{ path: "identity", message }]);

/** A device name from its hostname (names are at most 100 characters). */
const nameFromHostname = (hostname: string) => hostname.trim().slice(0, 100) || "device";

/** The signature must be the presented key's, over this registration, made within the allowed clock skew. */
function checkProof(input: RegisterRequest, now: number): void {
  const { identity } = input;
  if (Math.abs(now - identity.at) > REGISTER_PROOF_MAX_SKEW_MS)
    throw proofInvalid(
      `the registration was signed at ${new Date(identity.at).toISOString()}, more than ${REGISTER_PROOF_MAX_SKEW_MS / 60_000} minutes from the server's clock: check the router's clock`,
    );
  const text = registerProofText({ machineId: input.machineId, publicKey: identity.publicKey, at: identity.at });
  if (!verifyDeviceSignature(identity.publicKey, text, identity.signature))
    throw proofInvalid("the registration is not signed by the key it presents");
}

/** Serializes registrations of one machine id and of one key in an organization (rows may not exist yet). */
async function lockIdentity(trx: Db, orgId: string, machineId: string, publicKey: string): Promise<void> {
  for (const name of [`machine:${machineId}`, `key:${publicKey}`])
    await sql`select pg_advisory_xact_lock(hashtextextended(${`tern-register:${orgId}:${name}`}, 0))`.execute(trx);
}

/** A registration that presented a known machine id without its device's key. */
export interface IdentityConflict {
  orgId: string;
  /** The new pending device the registration became. */
  deviceId: string;
  /** The devices that hold the machine id. */
  knownDeviceIds: string[];
  machineId: string;
  hostname: string;
  remote: string;
}

export async function registerDevice(deps: RegisterDeps, input: RegisterRequest, client: { ip: string }): Promise<Registered> {
  const wait = deps.registerLimit.blockedFor(client.ip);
  if (wait !== null) throw rateLimited(wait);
  deps.registerLimit.hit(client.ip);
  // The signature is checked before any database work: a forged one costs no transaction.
  checkProof(input, Date.now());

  const deviceToken = newSecretToken(TOKEN_PREFIX.device);
  const { identity } = input;
  const identityColumns = { public_key: identity.publicKey, identity_proof_at: new Date(identity.at) };
  let conflict = null as IdentityConflict | null;
  const registered = await deps.db.transaction().execute(async (trx): Promise<Registered> => {
    const token = await useRegistrationToken(trx, input.token);
    if ("refused" in token) {
      if (token.refused === "exhausted")
        throw new ApiError("REGISTRATION_TOKEN_EXHAUSTED", "the registration token has been used as often as it allows");
      throw new ApiError(
        "UNAUTHENTICATED",
        token.refused === "expired" ? "the registration token has expired" : "unknown registration token",
      );
    }
    const org = await trx
      .selectFrom("organizations")
      .select(["id", "account_id", "name"])
      .where("id", "=", token.orgId)
      .executeTakeFirstOrThrow();
    const actor: Actor = { kind: "device", label: `registration:${token.name}`, userId: null, tokenId: null };
    const ctx: ServiceCtx = {
      ...systemCtx(deps as AppDeps, { id: org.id, accountId: org.account_id, name: org.name }, actor),
      db: trx,
    };

    await lockIdentity(trx, org.id, input.machineId, identity.publicKey);
    const known = await trx
      .selectFrom("devices")
      .select([
        "id",
        "machine_id",
        "public_key",
        "identity_proof_at",
        "interfaces",
        "is_approved",
        "hostname",
        "agent_version",
        "protocol_version",
      ])
      .where("organization_id", "=", org.id)
      .where((eb) => eb.or([eb("machine_id", "=", input.machineId), eb("public_key", "=", identity.publicKey)]))
      .orderBy("created_at")
      .forUpdate()
      .execute();
    const versions = { agent_version: input.versions.agent, protocol_version: input.versions.protocol };

    const existing =
      known.find((d) => d.public_key === identity.publicKey) ??
      known.find((d) => d.public_key === null && !d.is_approved && d.machine_id === input.machineId);
    if (existing) {
      if (existing.public_key !== null && existing.identity_proof_at && existing.identity_proof_at.getTime() >= identity.at)
        throw proofInvalid("this registration proof was used before: each registration must be signed anew");
      const interfaces = mergeDiscovered(existing.interfaces, dedupe(input.interfaces), randomUUID);
      const stored = await trx
        .updateTable("devices")
        .set({
          hostname: input.hostname,
          machine_id: input.machineId,
          device_token_hash: hashSecretToken(deviceToken),
          ...identityColumns,
          ...versions,
          interfaces: toJson(interfaces),
          updated_at: sql`now()`,
        })
        .where("id", "=", existing.id)
        .returning("firewall")
        .executeTakeFirstOrThrow();
      await syncLanIndex(trx, { id: existing.id, organizationId: org.id, interfaces, firewall: stored.firewall });
      await recordAudit(ctx, {
        action: "reregister",
        resource: "devices",
        resourceId: existing.id,
        before: {
          hostname: existing.hostname,
          machineId: existing.machine_id,
          publicKey: existing.public_key,
          versions: { agent: existing.agent_version, protocol: existing.protocol_version },
          interfaces: existing.interfaces.map((i) => i.devId),
        },
        after: {
          hostname: input.hostname,
          machineId: input.machineId,
          publicKey: identity.publicKey,
          // "proven": the device holds its key; "bound": a pending device without one took this key.
          identity: existing.public_key === null ? "bound" : "proven",
          versions: input.versions,
          interfaces: interfaces.map((i) => i.devId),
          registrationToken: token.id,
        },
      });
      return { created: false, response: { deviceId: existing.id, deviceToken, isApproved: existing.is_approved } };
    }

    // A new router takes a place in the account's plan (re-registrations above do not).
    await assertDeviceRoom(trx, org.account_id, 1, false);
    const id = randomUUID();
    const fresh = dedupe(input.interfaces).map((i) => discoveredInterface(i, randomUUID()));
    await trx
      .insertInto("devices")
      .values({
        id,
        organization_id: org.id,
        name: nameFromHostname(input.hostname),
        hostname: input.hostname,
        machine_id: input.machineId,
        is_approved: false,
        device_token_hash: hashSecretToken(deviceToken),
        ...identityColumns,
        ...versions,
        interfaces: toJson(fresh),
        static_routes: toJson([]),
        dhcp: toJson([]),
        bgp: toJson(Bgp.parse({})),
        firewall: toJson(Firewall.parse({})),
      })
      .execute();
    await syncLanIndex(trx, { id, organizationId: org.id, interfaces: fresh, firewall: Firewall.parse({}) });
    const holders = known.filter((d) => d.machine_id === input.machineId);
    await recordAudit(ctx, {
      action: "register",
      resource: "devices",
      resourceId: id,
      after: {
        hostname: input.hostname,
        machineId: input.machineId,
        publicKey: identity.publicKey,
        versions: input.versions,
        registrationToken: token.id,
        ...(holders.length > 0 ? { identityConflictWith: holders.map((d) => d.id) } : {}),
      },
    });
    if (holders.length > 0) {
      conflict = {
        orgId: org.id,
        deviceId: id,
        knownDeviceIds: holders.map((d) => d.id),
        machineId: input.machineId,
        hostname: input.hostname,
        remote: client.ip,
      };
      // Each device whose machine id was presented without its key gets an entry of its own.
      for (const d of holders)
        await recordAudit(ctx, {
          action: "identity-conflict",
          resource: "devices",
          resourceId: d.id,
          after: {
            machineId: input.machineId,
            newDeviceId: id,
            hostname: input.hostname,
            remote: client.ip,
            publicKey: identity.publicKey,
            registrationToken: token.id,
          },
        });
    }
    return { created: true, response: { deviceId: id, deviceToken, isApproved: false } };
  });
  if (conflict) {
    deps.logger.warn(conflict, "device identity conflict: a registration presented a known machine id without its key");
    deps.deviceLink.events.emit("identity-conflict", conflict);
  }
  return registered;
}

/** The first report of each devId (an agent listing one twice is not worth refusing the device for). */
function dedupe<T extends { devId: string }>(list: readonly T[]): T[] {
  const seen = new Set<string>();
  return list.filter((i) => !seen.has(i.devId) && seen.add(i.devId));
}
