/**
 * One agent-owned nftables table, swapped whole and atomically: the script
 * declares the table (a no-op when it exists), deletes it and defines it again
 * in the same `nft -f` transaction, so packets see either the old or the new
 * rules, never an empty table. Conntrack entries (established flows, NAT
 * bindings) live outside the table and survive the swap.
 *
 * Diffing: the hash of the rendered text and of `nft list table` right after
 * the swap are kept in `<dir>/<table>.applied`; the next apply with the same
 * text and an unchanged listing runs no mutating command. A table edited or
 * removed by hand is detected by its listing and re-applied.
 */
import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../fs.ts";
import type { Runner } from "../../runner.ts";

export interface OwnedTable {
  family: "inet" | "ip";
  name: string;
}

interface AppliedState {
  rendered: string;
  listed: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The full `nft -f` script that replaces `table` with `body` (the text inside `table … { }`). */
export function tableScript(table: OwnedTable, body: string, header: string): string {
  const id = `${table.family} ${table.name}`;
  return `#!/usr/sbin/nft -f\n# ${header}\n# Rendered by tern-agent; replaced whole on every change. Do not edit.\ntable ${id} {}\ndelete table ${id}\ntable ${id} {\n${body}}\n`;
}

export function scriptPath(dir: string, table: OwnedTable): string {
  return join(dir, `${table.name}.nft`);
}

async function listTable(runner: Runner, table: OwnedTable): Promise<string | null> {
  const r = await runner.run(["nft", "list", "table", table.family, table.name], { allowFailure: true });
  return r.exitCode === 0 ? r.stdout : null;
}

async function readState(path: string): Promise<AppliedState | null> {
  try {
    const s = JSON.parse(await readFile(path, "utf8")) as Partial<AppliedState>;
    return typeof s.rendered === "string" && typeof s.listed === "string" ? { rendered: s.rendered, listed: s.listed } : null;
  } catch {
    return null;
  }
}

/**
 * Brings `table` to `script` (from tableScript), or removes it when `script`
 * is null. Returns true when something on the system changed.
 */
export async function applyOwnedTable(runner: Runner, dir: string, table: OwnedTable, script: string | null): Promise<boolean> {
  const statePath = join(dir, `${table.name}.applied`);
  const listed = await listTable(runner, table);
  if (script === null) {
    await rm(statePath, { force: true });
    await rm(scriptPath(dir, table), { force: true });
    if (listed === null) return false;
    await runner.run(["nft", "delete", "table", table.family, table.name]);
    return true;
  }
  const state = await readState(statePath);
  if (listed !== null && state && state.rendered === sha256(script) && state.listed === sha256(listed)) return false;
  const path = scriptPath(dir, table);
  await writeFileAtomic(path, script, 0o644);
  // One transaction: on any error nft changes nothing and the state file stays as it was.
  await runner.run(["nft", "-f", path]);
  const after = (await listTable(runner, table)) ?? "";
  await writeFileAtomic(statePath, `${JSON.stringify({ rendered: sha256(script), listed: sha256(after) })}\n`, 0o644);
  return true;
}
