/**
 * The lab's two small C helpers (native/*.c) are compiled on first use with
 * gcc and cached by a hash of their source, so a changed source is rebuilt
 * and an unchanged one costs nothing.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "@tern/netlab";
import { LabError, LabErrorCode } from "../errors.ts";

export type NativeTool = "nfq-netem" | "ns-relay";

const NATIVE_DIR = fileURLToPath(new URL("../../native/", import.meta.url));

const TOOLS: Record<NativeTool, { libs: string[]; packages: string }> = {
  "nfq-netem": { libs: ["-lnetfilter_queue"], packages: "gcc libnetfilter-queue-dev" },
  "ns-relay": { libs: [], packages: "gcc" },
};

/** Path of the compiled tool under binDir, building it when missing or out of date. */
export async function nativeTool(tool: NativeTool, binDir: string): Promise<string> {
  const source = join(NATIVE_DIR, `${tool}.c`);
  const { libs, packages } = TOOLS[tool];
  const flags = ["-O2", "-Wall", "-Wextra"];
  const text = await readFile(source);
  const hash = createHash("sha256").update(text).update(flags.join(" ")).update(libs.join(" ")).digest("hex").slice(0, 12);
  const out = join(binDir, `${tool}-${hash}`);
  if (
    await stat(out).then(
      () => true,
      () => false,
    )
  )
    return out;

  await mkdir(binDir, { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  const r = await run(["gcc", ...flags, "-o", tmp, source, ...libs], { allowFailure: true, timeoutMs: 60_000 }).catch(
    (err: Error) => ({ exitCode: 127, stderr: err.message, stdout: "" }),
  );
  if (r.exitCode !== 0) {
    await rm(tmp, { force: true });
    throw new LabError(
      LabErrorCode.NATIVE_BUILD_FAILED,
      `cannot build ${tool} from ${source} (needs: apt-get install ${packages})`,
      [...r.stderr.trim().split("\n").slice(0, 10)],
    );
  }
  await rename(tmp, out);
  // Builds of older sources are never used again.
  for (const f of await readdir(binDir)) {
    if (f.startsWith(`${tool}-`) && join(binDir, f) !== out && !f.endsWith(".tmp")) await rm(join(binDir, f), { force: true });
  }
  return out;
}
