/** Shell completion generated from the command tree: bash completes it for real; zsh and fish are syntax-checked when installed. */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useTern } from "./support/run-tern.ts";

const tern = useTern();
const run = promisify(execFile);

async function has(shell: string): Promise<boolean> {
  return run("sh", ["-c", `command -v ${shell}`]).then(
    () => true,
    () => false,
  );
}

/** What bash's completion function offers for the words typed so far (the last one being completed). */
async function bashComplete(script: string, words: string[]): Promise<string[]> {
  const file = path.join(tern.home, "tern.bash");
  await writeFile(file, script);
  const quoted = words.map((w) => `'${w}'`).join(" ");
  const { stdout } = await run("bash", [
    "-c",
    `source ${file}; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _tern; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ]);
  return stdout.split("\n").filter(Boolean);
}

describe("tern completion", () => {
  it("bash completes nouns, verbs and options, and skips option values", async () => {
    const r = await tern.run(["completion", "bash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await bashComplete(r.stdout, ["tern", "dev"])).toEqual(["devices"]);
    expect(await bashComplete(r.stdout, ["tern", "devices", ""])).toEqual(
      expect.arrayContaining(["ls", "show", "approve", "delete"]),
    );
    expect(await bashComplete(r.stdout, ["tern", "--org", "x", "tunnels", "cr"])).toEqual(["create"]);
    expect(await bashComplete(r.stdout, ["tern", "tokens", "create", "--p"])).toEqual(["--perm"]);
    expect(await bashComplete(r.stdout, ["tern", "jobs", "watch", "--j"])).toEqual(["--json"]);
    expect(await bashComplete(r.stdout, ["tern", "jobs", "ls", "--state", ""])).toEqual([]);
  });

  it("zsh and fish scripts are produced and parse", async () => {
    const zsh = await tern.run(["completion", "zsh"]);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain("bashcompinit");
    expect(zsh.stdout).toContain("complete -F _tern tern");
    const fish = await tern.run(["completion", "fish"]);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain(`complete -c tern -n 'test (__tern_path) = "devices"' -a approve`);
    for (const [shell, script] of [
      ["zsh", zsh.stdout],
      ["fish", fish.stdout],
    ] as const) {
      if (!(await has(shell))) continue;
      const file = path.join(tern.home, `tern.${shell}`);
      await writeFile(file, script);
      await run(shell, ["-n", file]);
    }
  });

  it("an unknown shell is a usage error", async () => {
    expect((await tern.run(["completion", "powershell"])).code).toBe(2);
  });
});
