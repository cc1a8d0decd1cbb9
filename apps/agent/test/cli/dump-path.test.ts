/**
 * Where `tern-agent dump` writes (spec, versioning 6.3.1: "the default path of
 * the fwdump tool changed"): `<state-dir>/dumps/` (/var/lib/tern-agent/dumps on
 * a router) unless --dest, as tern-agent-dump-<host>-<YYYYMMDDTHHMMSSZ>.tar.gz.
 */
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pathsOf } from "../../src/commands/deps.ts";
import { dumpBaseName, dumpStamp, freeDumpName } from "../../src/commands/dump-path.ts";
import { createDrivers } from "../../src/drivers/registry.ts";
import { parseCli } from "../../src/options.ts";
import { ExecRunner, type Runner } from "../../src/runner.ts";
import { cli } from "../support/cli.ts";
import { type TempDirs, tempDirs } from "../support/context.ts";
import { FakeSystem } from "../support/fake-system.ts";

const NAME = /^tern-agent-dump-(.+)-(\d{8}T\d{6}Z)(-\d+)?\.tar\.gz$/;

/** The UTC time a stamp names, in whole seconds. */
function stampTime(stamp: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(stamp);
  if (!m) throw new Error(`not a stamp: ${stamp}`);
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
}

describe("dump file name", () => {
  it("carries the host and the UTC time to the second, whatever the local time zone", () => {
    const at = new Date("2026-11-25T15:42:48.731Z");
    expect(dumpStamp(at)).toBe("20261125T154248Z");
    expect(dumpBaseName("edge-a", at)).toBe("tern-agent-dump-edge-a-20261125T154248Z");
    // The same instant written with an offset is the same name.
    expect(dumpBaseName("edge-a", new Date("2026-11-25T17:42:48+02:00"))).toBe("tern-agent-dump-edge-a-20261125T154248Z");
    expect(stampTime(dumpStamp(at))).toBe(Date.parse("2026-11-25T15:42:48Z"));
  });

  it("replaces characters a file name should not hold; keeps dots, dashes and underscores", () => {
    const at = new Date("2027-01-02T03:04:05Z");
    expect(dumpBaseName("branch 7/../etc", at)).toBe("tern-agent-dump-branch_7_.._etc-20270102T030405Z");
    expect(dumpBaseName("r1.example_net", at)).toBe("tern-agent-dump-r1.example_net-20270102T030405Z");
  });

  it("the default directory is <state-dir>/dumps: /var/lib/tern-agent/dumps unless --state-dir", () => {
    const defaults = parseCli(["dump"], {});
    expect(defaults.dest).toBeUndefined();
    expect(pathsOf(defaults).dumps).toBe("/var/lib/tern-agent/dumps");
    expect(pathsOf(parseCli(["dump", "--state-dir", "/srv/agent"], {})).dumps).toBe("/srv/agent/dumps");
    expect(parseCli(["dump", "--dest", "/tmp/x"], {}).dest).toBe("/tmp/x");
  });
});

describe("tern-agent dump destination", () => {
  let dirs: TempDirs;
  let common: string[];
  let runner: Runner;
  beforeEach(async () => {
    dirs = await tempDirs("dump-path");
    const sys = new FakeSystem([{ name: "wan0", mac: "02:00:00:00:0b:01", up: true, addresses: ["10.100.2.2/24"] }]);
    const exec = new ExecRunner();
    // tar makes the real archive; everything else sees a fake router.
    runner = { run: (argv, o) => (argv[0] === "tar" ? exec.run(argv, o) : sys.run(argv, o)) };
    common = ["--state-dir", dirs.stateDir, "--mode", "standalone", "--hostname", "edge-b", "--log-level", "warn"];
  });
  afterEach(() => dirs.remove());
  const dump = (extra: string[] = []) => cli(["dump", ...extra, ...common], { runner, drivers: createDrivers() });

  it("without --dest: <state-dir>/dumps/tern-agent-dump-<host>-<UTC start>.tar.gz, directory 0700, archive 0600", async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const r = await dump();
    const after = Date.now();
    expect(r.code, r.err).toBe(0);
    const archive = r.out.trim();
    const dumps = join(dirs.stateDir, "dumps");
    expect(archive.startsWith(`${dumps}/`)).toBe(true);
    const file = archive.slice(dumps.length + 1);
    const m = NAME.exec(file);
    expect(m, file).not.toBeNull();
    expect(m![1]).toBe("edge-b");
    expect(m![3]).toBeUndefined();
    const time = stampTime(m![2]!);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(after);
    expect((await stat(dumps)).mode & 0o777).toBe(0o700);
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    // Only the archive is left: the staging directory is gone.
    expect(await readdir(dumps)).toEqual([file]);
    // Its one top directory has the archive's name, so unpacked dumps do not mix.
    const top = (await new ExecRunner().run(["tar", "-tzf", archive])).stdout.split("\n").filter(Boolean);
    expect(new Set(top.map((l) => l.split("/")[0]))).toEqual(new Set([file.replace(/\.tar\.gz$/, "")]));
    expect(top).toContain(`${file.replace(/\.tar\.gz$/, "")}/README.txt`);
  });

  it("--dest overrides the directory (created 0700 if missing); the default directory is not touched", async () => {
    const dest = join(dirs.root, "support", "case-1234");
    const r = await dump(["--dest", dest]);
    expect(r.code, r.err).toBe(0);
    const archive = r.out.trim();
    expect(archive.startsWith(`${dest}/`)).toBe(true);
    expect(NAME.exec(archive.slice(dest.length + 1))?.[1]).toBe("edge-b");
    expect((await stat(dest)).mode & 0o777).toBe(0o700);
    expect((await stat(archive)).isFile()).toBe(true);
    await expect(stat(join(dirs.stateDir, "dumps"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("never overwrites: a name already taken gets -1, -2 …", async () => {
    const dest = join(dirs.root, "taken");
    await mkdir(dest);
    const base = dumpBaseName("edge-b", new Date("2026-11-25T15:42:48Z"));
    expect(await freeDumpName(dest, base)).toEqual({ name: base, archive: join(dest, `${base}.tar.gz`) });
    await writeFile(join(dest, `${base}.tar.gz`), "first");
    expect((await freeDumpName(dest, base)).name).toBe(`${base}-1`);
    await writeFile(join(dest, `${base}-1.tar.gz`), "second");
    expect((await freeDumpName(dest, base)).archive).toBe(join(dest, `${base}-2.tar.gz`));

    // Two real dumps into one directory are two archives.
    const [a, b] = [(await dump(["--dest", dest])).out.trim(), (await dump(["--dest", dest])).out.trim()];
    expect(a).not.toBe(b);
    expect(await readdir(dest)).toEqual(expect.arrayContaining([a.slice(dest.length + 1), b.slice(dest.length + 1)]));
  });
});
