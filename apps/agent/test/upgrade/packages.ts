/** Test packages: a tiny fake bundle per version, packed and signed the way packaging/agent-package.mjs does. */
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error: a plain JavaScript module without types
import * as tool from "../../../../packaging/agent-package.mjs";

export interface SignedPackage {
  file: string;
  version: string;
  sha256: string;
  signature: string;
  publicKey: string;
}

export const signingText: (version: string, sha256: string) => string = tool.signingText;
export const generateSigningKeys: () => { privateKeyPem: string; publicKey: string } = tool.generateSigningKeys;
export const signPackageBytes: (
  bytes: Buffer,
  version: string,
  privateKeyPem: string,
) => { version: string; sha256: string; signature: string; publicKey: string } = tool.signPackageBytes;

/** Every temporary directory of these tests, removed by removeTestDirs(). */
export const testDirs: string[] = [];

export async function removeTestDirs(): Promise<void> {
  const { rm } = await import("node:fs/promises");
  for (const dir of testDirs.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** A package whose dist/cli.js is `script` (a few lines of JavaScript standing in for the bundle). */
export async function fakePackage(version: string, script: string, privateKeyPem: string): Promise<SignedPackage> {
  const dir = await mkdtemp(join(tmpdir(), "tern-upgrade-test-"));
  testDirs.push(dir);
  const dist = join(dir, "dist");
  await mkdir(dist);
  await writeFile(join(dist, "cli.js"), script);
  const file: string = await tool.buildPackage({ version, out: join(dir, `tern-agent-${version}.tar.gz`), dist });
  const { readFile } = await import("node:fs/promises");
  const sig = signPackageBytes(await readFile(file), version, privateKeyPem);
  return { file, ...sig };
}
