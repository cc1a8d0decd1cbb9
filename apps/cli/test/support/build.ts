/**
 * vitest globalSetup: bundles the CLI once into a temporary directory (the
 * same esbuild build as `npm run build -w @tern/cli`), so each spawned `tern`
 * starts in a fraction of a second and the tests exercise the shipped bundle.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error: a plain .mjs build script without type declarations
import { buildCli } from "../../scripts/build.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    ternBin: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = await mkdtemp(path.join(tmpdir(), "tern-cli-build-"));
  project.provide("ternBin", await buildCli(path.join(dir, "tern.mjs")));
  return () => rm(dir, { recursive: true, force: true });
}
