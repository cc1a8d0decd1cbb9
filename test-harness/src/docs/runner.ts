/**
 * Runs the `run` blocks of one document in order, in one bash session
 * (`set -euo pipefail`), so later blocks see the variables earlier ones set,
 * as a reader's terminal would. A failure names the document, the block and the
 * Markdown line of the command that failed.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ShellBlock } from "./blocks.ts";

export interface DocRunFailure {
  /** 1-based index among the run blocks. */
  block: number;
  /** `docs/server.md:123`: the Markdown line of the failing command. */
  where: string;
  exitCode: number;
}

export interface DocRunResult {
  exitCode: number | null;
  failure: DocRunFailure | null;
  output: string;
  ms: number;
  /** Seconds each block that started took (the last one until the script ended). */
  blockSeconds: { block: number; line: number; seconds: number }[];
}

interface LineOrigin {
  block: number;
  mdLine: number;
}

/** The bash script of the blocks, and for each of its lines where it came from. */
export function docScript(blocks: ShellBlock[]): { script: string; origins: (LineOrigin | null)[] } {
  const lines: string[] = [
    "set -euo pipefail",
    // The ERR trap sees the failing command's line; the test maps it back to the Markdown.
    "trap 'rc=$?; echo \"DOCTEST-FAILED line $LINENO exit $rc\" >&2' ERR",
  ];
  const origins: (LineOrigin | null)[] = [null, null];
  blocks.forEach((b, i) => {
    lines.push(`echo "DOCTEST-BLOCK ${i + 1} (line ${b.line}) at $EPOCHREALTIME" >&2`);
    origins.push(null);
    b.code.split("\n").forEach((text, j) => {
      lines.push(text);
      origins.push({ block: i + 1, mdLine: b.firstLine + j });
    });
  });
  return { script: `${lines.join("\n")}\n`, origins };
}

/** Runs the blocks with bash in `cwd` with `env`; never throws for a failing block (the result says which). */
export async function runDocBlocks(
  docName: string,
  blocks: ShellBlock[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<DocRunResult> {
  const { script, origins } = docScript(blocks);
  const dir = await mkdtemp(join(tmpdir(), "tern-doc-script-"));
  const file = join(dir, "doc.sh");
  await writeFile(file, script);
  const t0 = performance.now();
  try {
    const { exitCode, output } = await new Promise<{ exitCode: number | null; output: string }>((resolve) => {
      // Own process group: a timeout kills what the blocks started in the background too.
      const child = spawn("bash", [file], { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (d) => {
        output += d;
      });
      child.stderr.on("data", (d) => {
        output += d;
      });
      const timer = setTimeout(() => {
        output += `\nDOCTEST-TIMEOUT after ${opts.timeoutMs} ms\n`;
        killGroup(child.pid);
      }, opts.timeoutMs);
      child.once("close", (code) => {
        clearTimeout(timer);
        killGroup(child.pid);
        resolve({ exitCode: code, output });
      });
    });
    const failed = /DOCTEST-FAILED line (\d+) exit (\d+)/.exec(output);
    let failure: DocRunFailure | null = null;
    if (failed) {
      const origin = origins[Number(failed[1]) - 1];
      failure = {
        block: origin?.block ?? 0,
        where: `${docName}:${origin?.mdLine ?? "?"}`,
        exitCode: Number(failed[2]),
      };
    } else if (exitCode !== 0) {
      const lastBlock = [...output.matchAll(/DOCTEST-BLOCK (\d+) \(line (\d+)\)/g)].at(-1);
      failure = {
        block: Number(lastBlock?.[1] ?? 0),
        where: `${docName}:${lastBlock?.[2] ?? "?"}`,
        exitCode: exitCode ?? -1,
      };
    }
    const ms = performance.now() - t0;
    return { exitCode, failure, output, ms, blockSeconds: blockTimes(output, Date.now() / 1000) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function blockTimes(output: string, endS: number): DocRunResult["blockSeconds"] {
  const starts = [...output.matchAll(/DOCTEST-BLOCK (\d+) \(line (\d+)\) at ([\d.]+)/g)].map((m) => ({
    block: Number(m[1]),
    line: Number(m[2]),
    at: Number(m[3]),
  }));
  return starts.map((s, i) => ({
    block: s.block,
    line: s.line,
    seconds: Math.round(((starts[i + 1]?.at ?? endS) - s.at) * 10) / 10,
  }));
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group is gone
  }
}

/** One line for an assertion message: where it failed and the end of the output. */
export function describeFailure(r: DocRunResult): string {
  const tail = r.output.trim().split("\n").slice(-40).join("\n");
  return r.failure
    ? `block ${r.failure.block} failed at ${r.failure.where} (exit ${r.failure.exitCode}):\n${tail}`
    : `exit ${r.exitCode}:\n${tail}`;
}
