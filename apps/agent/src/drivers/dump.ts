/**
 * Building blocks for drivers' `dump()` items (`tern-agent dump`): command
 * output and rendered files, with secrets (PSKs, BGP passwords) redacted. A
 * failure becomes text in the item, never an exception: a dump is taken when
 * things are already broken.
 */
import { readFile } from "node:fs/promises";
import type { RunOptions } from "../runner.ts";
import type { DriverContext, DumpItem } from "./driver.ts";

/** Replaces secret values in rendered daemon configs: swanctl `secret = …`, FRR `password …`. */
export function redactSecrets(text: string): string {
  return text.replace(/^(\s*secret\s*=\s*).+$/gm, "$1<redacted>").replace(/^(\s*neighbor \S+ password ).+$/gm, "$1<redacted>");
}

/** The output of `argv` (or its exit code and stderr when it failed). */
export async function commandItem(
  ctx: Pick<DriverContext, "runner">,
  name: string,
  argv: string[],
  options: RunOptions = {},
): Promise<DumpItem> {
  const r = await ctx.runner
    .run(argv, { ...options, allowFailure: true, timeoutMs: options.timeoutMs ?? 15_000 })
    .catch((err: unknown) => ({ exitCode: -1, stdout: "", stderr: String(err) }));
  return { name, content: r.exitCode === 0 ? r.stdout : `$ ${argv.join(" ")}\nexit ${r.exitCode}\n${r.stdout}${r.stderr}` };
}

/** A file's text with secrets redacted, or a note that it is missing. */
export async function fileItem(name: string, path: string): Promise<DumpItem> {
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => `${path}: ${err.code ?? err.message}\n`);
  return { name, content: redactSecrets(text) };
}
