/**
 * Agent packages and signing keys (account-wide): uploads whose checksum or signature is wrong are refused with
 * their own codes and store nothing; one package per version; size and media type limits; account owners
 * upload and delete, account managers list, organization-only members and other accounts get nothing; a
 * package a rollout uses cannot be deleted.
 */
import { randomBytes } from "node:crypto";
import type { AgentPackage, AgentSigningKey } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import {
  createTestRollout,
  generateSigningKeys,
  signatureHeaders,
  signPackageBytes,
  uploadTestPackage,
} from "../../../test/support/agent-upgrades.ts";
import { useTestServer } from "../../../test/support/test-server.ts";

type ErrorBody = { code: string };
const t = useTestServer({ TERN_AGENT_PACKAGE_MAX_BYTES: String(3 * 1024 * 1024) });

async function registeredKey(token = t.admin.token) {
  const keys = generateSigningKeys();
  const res = await t.api<AgentSigningKey>("POST", "/api/agent-signing-keys", {
    token,
    body: { name: "release key", publicKey: keys.publicKey },
  });
  expect(res.status, res.text).toBe(201);
  return { ...keys, id: res.body.id };
}

const upload = (bytes: Buffer, headers: Record<string, string>, token = t.admin.token) =>
  t.api<AgentPackage & ErrorBody>("POST", "/api/agent-packages", { token, bytes, headers });

const countPackages = async () =>
  Number(
    (
      await t.database.db
        .selectFrom("agent_packages")
        .select((e) => e.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("agent packages", () => {
  it("stores a signed package bigger than the JSON body limit, lists it, and audits the upload", async () => {
    const key = await registeredKey();
    const bytes = randomBytes(2 * 1024 * 1024);
    const sig = signPackageBytes(bytes, "2.0.0", key.privateKeyPem);
    const res = await upload(bytes, signatureHeaders(sig));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ version: "2.0.0", size: bytes.length, sha256: sig.sha256, signingKey: key.id });
    const list = await t.api<AgentPackage[]>("GET", "/api/agent-packages", { token: t.admin.token });
    expect(list.body.map((p) => p.version)).toContain("2.0.0");
    const stored = await t.database.db
      .selectFrom("agent_packages")
      .select("content")
      .where("id", "=", res.body.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.content).equals(bytes)).toBe(true);
    const audit = await t.database.db.selectFrom("audit_log").select("action").where("resource_id", "=", res.body.id).execute();
    expect(audit.map((a) => a.action)).toEqual(["agent_package_uploaded"]);
  });

  it("refuses bytes that are not the signed ones: 400 PACKAGE_CHECKSUM_MISMATCH, nothing stored", async () => {
    const key = await registeredKey();
    const bytes = randomBytes(1000);
    const sig = signPackageBytes(bytes, "2.1.0", key.privateKeyPem);
    const before = await countPackages();
    const tampered = Buffer.from(bytes);
    tampered[0] = (tampered[0]! + 1) % 256;
    const res = await upload(tampered, signatureHeaders(sig));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("PACKAGE_CHECKSUM_MISMATCH");
    expect(await countPackages()).toBe(before);
  });

  it("refuses a key not registered on the account, a signature of another version, and a forged signature: 400 PACKAGE_SIGNATURE_INVALID", async () => {
    const key = await registeredKey();
    const bytes = randomBytes(1000);
    const unregistered = signPackageBytes(bytes, "2.2.0", generateSigningKeys().privateKeyPem);
    const otherVersion = { ...signPackageBytes(bytes, "2.2.1", key.privateKeyPem), version: "2.2.0" };
    const good = signPackageBytes(bytes, "2.2.0", key.privateKeyPem);
    const forged = { ...good, signature: Buffer.alloc(64, 7).toString("base64") };
    // Another account's registered key does not count either.
    const tenant = await t.createTenant("Other");
    const theirs = await registeredKey(tenant.token);
    const theirSig = signPackageBytes(bytes, "2.2.0", theirs.privateKeyPem);
    const before = await countPackages();
    for (const sig of [unregistered, otherVersion, forged, theirSig]) {
      const res = await upload(bytes, signatureHeaders(sig));
      expect(res.status, JSON.stringify(sig)).toBe(400);
      expect(res.body.code).toBe("PACKAGE_SIGNATURE_INVALID");
    }
    expect(await countPackages()).toBe(before);
  });

  it("refuses missing or malformed signature headers (400 VALIDATION_FAILED), another media type (415) and an oversized body (413)", async () => {
    const key = await registeredKey();
    const bytes = randomBytes(100);
    const sig = signPackageBytes(bytes, "2.3.0", key.privateKeyPem);
    const { "x-tern-package-signature": _, ...noSignature } = signatureHeaders(sig);
    expect((await upload(bytes, noSignature)).body.code).toBe("VALIDATION_FAILED");
    expect((await upload(bytes, { ...signatureHeaders(sig), "x-tern-package-version": "../etc" })).body.code).toBe(
      "VALIDATION_FAILED",
    );
    const json = await upload(bytes, { ...signatureHeaders(sig), "content-type": "application/json" });
    expect(json.status).toBe(415);
    expect(json.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const big = randomBytes(3 * 1024 * 1024 + 1);
    const tooBig = await upload(big, signatureHeaders(signPackageBytes(big, "2.3.1", key.privateKeyPem)));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("keeps one package per version: 409 PACKAGE_VERSION_EXISTS", async () => {
    await uploadTestPackage(t, { version: "2.4.0" });
    const key = await registeredKey();
    const bytes = randomBytes(100);
    const res = await upload(bytes, signatureHeaders(signPackageBytes(bytes, "2.4.0", key.privateKeyPem)));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("PACKAGE_VERSION_EXISTS");
  });

  it("cannot delete a package a running rollout uses (409 ROLLOUT_CONFLICT); after cancelling it can", async () => {
    const { rollout } = await createTestRollout(t, 1);
    const del = await t.api<ErrorBody>("DELETE", `/api/agent-packages/${rollout.package}`, { token: t.admin.token });
    expect(del.status).toBe(409);
    expect(del.body.code).toBe("ROLLOUT_CONFLICT");
    expect((await t.api("POST", `/api/agent-upgrades/${rollout.id}/cancel`, { token: t.admin.token })).status).toBe(200);
    expect((await t.api("DELETE", `/api/agent-packages/${rollout.package}`, { token: t.admin.token })).status).toBe(204);
    expect((await t.api("GET", `/api/agent-upgrades/${rollout.id}`, { token: t.admin.token })).status).toBe(404);
  });

  it("a signing key with packages cannot be removed (409 CONFLICT); one registered twice is a conflict", async () => {
    const pkg = await uploadTestPackage(t);
    const del = await t.api<ErrorBody>("DELETE", `/api/agent-signing-keys/${pkg.signingKey}`, { token: t.admin.token });
    expect(del.status).toBe(409);
    expect(del.body.code).toBe("CONFLICT");
    const keys = (await t.api<AgentSigningKey[]>("GET", "/api/agent-signing-keys", { token: t.admin.token })).body;
    const again = await t.api<ErrorBody>("POST", "/api/agent-signing-keys", {
      token: t.admin.token,
      body: { name: "again", publicKey: keys.find((k) => k.id === pkg.signingKey)!.publicKey },
    });
    expect(again.status).toBe(409);
    const unused = await registeredKey();
    expect((await t.api("DELETE", `/api/agent-signing-keys/${unused.id}`, { token: t.admin.token })).status).toBe(204);
  });

  it("account managers list, only account owners upload; organization members and other accounts see nothing", async () => {
    const pkg = await uploadTestPackage(t);
    const accountManager = await t.addMember("manager", { scope: "account" });
    const list = await t.api<AgentPackage[]>("GET", "/api/agent-packages", { token: accountManager.token });
    expect(list.status).toBe(200);
    expect(list.body.map((p) => p.id)).toContain(pkg.id);
    const key = generateSigningKeys();
    const add = await t.api<ErrorBody>("POST", "/api/agent-signing-keys", {
      token: accountManager.token,
      body: { name: "mine", publicKey: key.publicKey },
    });
    expect(add.status).toBe(403);
    const orgOwner = await t.addMember("owner");
    expect((await t.api("GET", "/api/agent-packages", { token: orgOwner.token })).status).toBe(403);
    const tenant = await t.createTenant("Elsewhere");
    const theirs = await t.api<AgentPackage[]>("GET", "/api/agent-packages", { token: tenant.token });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual([]);
    const del = await t.api<ErrorBody>("DELETE", `/api/agent-packages/${pkg.id}`, { token: tenant.token });
    expect(del.status).toBe(404);
  });

  it("refuses unknown fields and malformed keys when registering a key", async () => {
    for (const body of [
      { name: "k", publicKey: "short" },
      { name: "k", publicKey: generateSigningKeys().publicKey, extra: 1 },
      { name: "" },
    ]) {
      const res = await t.api<ErrorBody>("POST", "/api/agent-signing-keys", { token: t.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("VALIDATION_FAILED");
    }
  });
});
