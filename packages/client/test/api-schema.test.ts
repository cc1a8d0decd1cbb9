/** The committed src/api-schema.d.ts is what openapi-typescript makes of the committed apps/server/openapi.json. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const require = createRequire(import.meta.url);
const serverDir = path.dirname(require.resolve("@tern/server/package.json"));
const packageDir = path.resolve(import.meta.dirname, "..");

it("src/api-schema.d.ts matches apps/server/openapi.json (run `npm run generate -w @tern/client` after `npm run openapi -w @tern/server`)", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "tern-client-schema-"));
  try {
    const out = path.join(dir, "api-schema.d.ts");
    const bin = path.join(path.dirname(require.resolve("openapi-typescript/package.json")), "bin/cli.js");
    await promisify(execFile)(process.execPath, [
      bin,
      path.join(serverDir, "openapi.json"),
      "--default-non-nullable",
      "false",
      "-o",
      out,
    ]);
    const committed = await readFile(path.join(packageDir, "src/api-schema.d.ts"), "utf8");
    expect(
      committed === (await readFile(out, "utf8")),
      "src/api-schema.d.ts is stale: run `npm run generate -w @tern/client`",
    ).toBe(true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
