/**
 * Agent upgrade test helpers: an operator's key pair, a signed package (any bytes: the server never unpacks
 * it) uploaded through the API, and a rollout in the admin's organization. Signing goes through
 * packaging/agent-package.mjs, the operator's own tool.
 */
import { randomBytes } from "node:crypto";
import type { AgentPackage, Rollout } from "@tern/protocol";
// @ts-expect-error: a plain JavaScript module without types
import * as tool from "../../../../packaging/agent-package.mjs";
import { insertTestDevice } from "./devices.ts";
import type { TestServer } from "./test-server.ts";

export interface PackageSignature {
  version: string;
  sha256: string;
  signature: string;
  publicKey: string;
}

export const generateSigningKeys: () => { privateKeyPem: string; publicKey: string } = tool.generateSigningKeys;
export const signPackageBytes: (bytes: Buffer, version: string, privateKeyPem: string) => PackageSignature =
  tool.signPackageBytes;

export function signatureHeaders(sig: PackageSignature): Record<string, string> {
  return {
    "content-type": "application/octet-stream",
    "x-tern-package-version": sig.version,
    "x-tern-package-sha256": sig.sha256,
    "x-tern-package-signature": sig.signature,
    "x-tern-package-public-key": sig.publicKey,
  };
}

let versions = 0;

/** Registers a new key on the admin's account and uploads a signed package of a fresh version (or `version`). */
export async function uploadTestPackage(
  t: TestServer,
  options: { version?: string; bytes?: Buffer; token?: string } = {},
): Promise<AgentPackage & { privateKeyPem: string }> {
  const keys = generateSigningKeys();
  const token = options.token ?? t.admin.token;
  const key = await t.api("POST", "/api/agent-signing-keys", {
    token,
    body: { name: `key ${++versions}`, publicKey: keys.publicKey },
  });
  if (key.status !== 201) throw new Error(`signing key: ${key.status} ${key.text}`);
  const bytes = options.bytes ?? randomBytes(4096);
  const version = options.version ?? `1.${versions}.0-test`;
  const res = await t.api<AgentPackage>("POST", "/api/agent-packages", {
    token,
    bytes,
    headers: signatureHeaders(signPackageBytes(bytes, version, keys.privateKeyPem)),
  });
  if (res.status !== 201) throw new Error(`package upload: ${res.status} ${res.text}`);
  return { ...res.body, privateKeyPem: keys.privateKeyPem };
}

/** A rollout of a new package to `devices` new devices of the admin's organization. */
export async function createTestRollout(t: TestServer, devices = 1): Promise<{ rollout: Rollout; deviceIds: string[] }> {
  const pkg = await uploadTestPackage(t);
  const deviceIds: string[] = [];
  for (let i = 0; i < devices; i++) deviceIds.push((await insertTestDevice(t)).id);
  const res = await t.api<Rollout>("POST", "/api/agent-upgrades", {
    token: t.admin.token,
    body: { package: pkg.id, target: { deviceIds } },
  });
  if (res.status !== 201) throw new Error(`rollout: ${res.status} ${res.text}`);
  return { rollout: res.body, deviceIds };
}
