/**
 * A real, small agent package for the browser tests, signed with the
 * operator's tool (packaging/agent-package.mjs): a gzip tarball with the
 * manifest of its version, a signing key registered on the account, and the
 * upload as the tool does it (POST /api/agent-packages, the signature as headers).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ok, type Schemas, type TernClient } from "@tern/client";
// @ts-expect-error: a plain JavaScript module without types
import * as tool from "../../../../packaging/agent-package.mjs";
import { stackInfo } from "./stack-info.ts";

const generateSigningKeys = tool.generateSigningKeys as () => { privateKeyPem: string; publicKey: string };
const signPackageBytes = tool.signPackageBytes as (
  bytes: Buffer,
  version: string,
  privateKeyPem: string,
) => { version: string; sha256: string; signature: string; publicKey: string };

/** Registers a new signing key named `keyName`, builds and uploads a package of `version`; answers the stored package. */
export async function uploadSignedPackage(api: TernClient, version: string, keyName: string): Promise<Schemas["AgentPackage"]> {
  const keys = generateSigningKeys();
  await ok(api.api.POST("/api/agent-signing-keys", { body: { name: keyName, publicKey: keys.publicKey } }));
  const dir = await mkdtemp(path.join(tmpdir(), "tern-e2e-package-"));
  try {
    await mkdir(path.join(dir, "tree", "dist"), { recursive: true });
    await writeFile(
      path.join(dir, "tree", "manifest.json"),
      JSON.stringify({ name: "tern-agent", version, builtAt: new Date().toISOString() }),
    );
    await writeFile(path.join(dir, "tree", "dist", "cli.js"), `console.log("tern-agent ${version}");\n`);
    const file = path.join(dir, `tern-agent-${version}.tar.gz`);
    execFileSync("tar", ["-czf", file, "-C", path.join(dir, "tree"), "."]);
    const bytes = await readFile(file);
    const sig = signPackageBytes(bytes, version, keys.privateKeyPem);
    const res = await api.raw(`/api/agent-packages?org=${stackInfo().orgId}`, {
      method: "POST",
      headers: {
        "content-type": "application/octet-stream",
        "x-tern-package-version": sig.version,
        "x-tern-package-sha256": sig.sha256,
        "x-tern-package-signature": sig.signature,
        "x-tern-package-public-key": sig.publicKey,
      },
      body: bytes,
    });
    if (res.status !== 201) throw new Error(`package upload: ${res.status} ${await res.text()}`);
    return (await res.json()) as Schemas["AgentPackage"];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
