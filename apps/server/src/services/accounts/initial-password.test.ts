/** The first administrator's generated password: on a terminal printed, otherwise a 0600 file and a log line that names only the file. */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { announceInitialPassword, INITIAL_PASSWORD_FILE } from "./initial-password.ts";

const secret = {
  email: "admin@localhost",
  password: "s3cr3t-generated-password",
  url: "http://127.0.0.1:3000",
  docsUrl: "http://x/docs",
};

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: pino({ level: "info" }, stream) };
}

describe("announceInitialPassword", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tern-initial-pw-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("on a terminal: printed, no file, nothing in the log", async () => {
    const printed: string[] = [];
    const log = capture();
    const out = await announceInitialPassword(secret, {
      isTTY: true,
      print: (s) => printed.push(s),
      dataDir: dir,
      logger: log.logger,
    });
    expect(out).toEqual({ printed: true });
    expect(printed.join("")).toContain(secret.password);
    expect(log.lines.join("")).not.toContain(secret.password);
    await expect(stat(path.join(dir, INITIAL_PASSWORD_FILE))).rejects.toThrow();
  });

  it("not a terminal: a 0600 file holds it, the log names the file and not the password", async () => {
    const printed: string[] = [];
    const log = capture();
    const dataDir = path.join(dir, "data", "nested");
    const out = await announceInitialPassword(secret, {
      isTTY: false,
      print: (s) => printed.push(s),
      dataDir,
      logger: log.logger,
    });
    const file = path.join(dataDir, INITIAL_PASSWORD_FILE);
    expect(out).toEqual({ file });
    expect(printed).toEqual([]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    expect(await readFile(file, "utf8")).toContain(secret.password);
    const logged = log.lines.join("");
    expect(logged).toContain(file);
    expect(logged).not.toContain(secret.password);
  });

  it("replaces a looser file left from an earlier start with a 0600 one", async () => {
    const file = path.join(dir, INITIAL_PASSWORD_FILE);
    await writeFile(file, "old", { mode: 0o644 });
    await announceInitialPassword(secret, { isTTY: false, print: () => {}, dataDir: dir, logger: capture().logger });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toContain(secret.password);
  });

  it("an unwritable data directory: an error in the log, still without the password", async () => {
    const blocker = path.join(dir, "a-file");
    await writeFile(blocker, "");
    const log = capture();
    const out = await announceInitialPassword(secret, {
      isTTY: false,
      print: () => {},
      dataDir: path.join(blocker, "sub"),
      logger: log.logger,
    });
    expect(out).toHaveProperty("error");
    expect(log.lines.join("")).toContain("TERN_ADMIN_PASSWORD");
    expect(log.lines.join("")).not.toContain(secret.password);
  });
});
