/** `tern-agent plan CONFIG.json`: what the drivers would write and run, from scratch; changes nothing. */
import { configHash } from "@tern/protocol";
import { shellQuote } from "../drivers/links/dhcp-client.ts";
import { type CliDeps, readConfigFile } from "./deps.ts";

export async function plan({ options, drivers, io }: CliDeps): Promise<number> {
  const config = await readConfigFile(options.args[0]);
  const ctx = { mode: options.mode, runDir: options.runDir, stateDir: options.stateDir };
  const plans = drivers.map((d) => ({ driver: d.name, ...d.plan(config, ctx) }));
  const hide = (content: string, mode: number) =>
    options.showSecrets || (mode & 0o077) !== 0 ? content : "<private file: --show-secrets shows it>\n";
  if (options.json) {
    const out = plans.map((p) => ({ ...p, files: p.files.map((f) => ({ ...f, content: hide(f.content, f.mode) })) }));
    io.out(`${JSON.stringify({ hash: configHash(config), drivers: out }, null, 2)}\n`);
    return 0;
  }
  const lines = [`# config ${configHash(config)} (${options.mode} mode, run dir ${options.runDir})`];
  for (const p of plans) {
    lines.push("", `## ${p.driver}`);
    if (p.files.length === 0 && p.commands.length === 0) lines.push("(nothing)");
    for (const f of p.files)
      lines.push(`--- file ${f.path} (mode ${f.mode.toString(8).padStart(4, "0")})`, hide(f.content, f.mode).trimEnd());
    for (const c of p.commands) lines.push(`$ ${c.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : shellQuote(a))).join(" ")}`);
  }
  io.out(`${lines.join("\n")}\n`);
  return 0;
}
