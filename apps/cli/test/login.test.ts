/** tern login / logout, the stored session and the exit codes of auth and usage errors, against a real server. */
import { readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { useApiServer } from "@tern/client/test/support/api-server.ts";
import { describe, expect, it } from "vitest";
import { runAtTerminal, useTern } from "./support/run-tern.ts";

const s = useApiServer();
const tern = useTern();
const credentialsPath = () => path.join(tern.configDir, "tern", "credentials.json");
const stored = async () => JSON.parse(await readFile(credentialsPath(), "utf8"));
const login = () =>
  tern.run(["login", "--server", s.url, "--email", s.admin.email, "--password-stdin"], { input: `${s.admin.password}\n` });

describe("before login", () => {
  it("a command that needs the API exits 3 and says to log in", async () => {
    const r = await tern.run(["devices", "ls"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("tern login");
    const j = await tern.run(["devices", "ls", "--json"]);
    expect(j.code).toBe(3);
    expect(JSON.parse(j.stderr)).toMatchObject({ code: "NOT_LOGGED_IN", exitCode: 3 });
    expect(j.stdout).toBe("");
  });

  it("usage errors exit 2: unknown command, unknown option, missing argument", async () => {
    expect((await tern.run(["devices", "frob"])).code).toBe(2);
    expect((await tern.run(["devices", "ls", "--no-such-option"])).code).toBe(2);
    expect((await tern.run(["devices", "show"])).code).toBe(2);
    expect((await tern.run(["jobs", "ls", "--limit", "zero"])).code).toBe(2);
    expect((await tern.run([])).code).toBe(2);
    const help = await tern.run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes");
  });

  it("does not prompt when stdin is not a terminal: a missing password is a usage error", async () => {
    const r = await tern.run(["login", "--server", s.url, "--email", s.admin.email]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--password-stdin");
    const noEmail = await tern.run(["login", "--server", s.url, "--password-stdin"], { input: "x\n" });
    expect(noEmail.code).toBe(2);
  });

  it("a wrong password exits 3 and stores nothing", async () => {
    const r = await tern.run(["login", "--server", s.url, "--email", s.admin.email, "--password-stdin"], { input: "wrong\n" });
    expect(r.code).toBe(3);
    await expect(stat(credentialsPath())).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("an unreachable server exits 6", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const r = await tern.run(["login", "--server", `http://127.0.0.1:${port}`, "--email", "a@example.com", "--password-stdin"], {
      input: "x\n",
    });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("cannot reach");
  });
});

describe("logged in", () => {
  it("login stores the session 0600 in a 0700 directory under XDG_CONFIG_HOME", async () => {
    const r = await login();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Logged in to ${s.url} as ${s.admin.email}`);
    expect((await stat(credentialsPath())).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(credentialsPath()))).mode & 0o777).toBe(0o700);
    const file = await stored();
    expect(file).toMatchObject({ server: s.url, email: s.admin.email, credentials: { kind: "session" } });
    expect(file.credentials.refreshToken).toBeTruthy();
    expect(JSON.stringify(file)).not.toContain(s.admin.password);
  });

  it("an expired access JWT is refreshed and the rotated tokens are written back", async () => {
    const before = await stored();
    before.credentials.expiresAt = 0;
    await writeFile(credentialsPath(), JSON.stringify(before), { mode: 0o600 });
    const r = await tern.run(["devices", "ls", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual([]);
    const after = await stored();
    expect(after.credentials.refreshToken).not.toBe(before.credentials.refreshToken);
    expect(after.credentials.expiresAt).toBeGreaterThan(Date.now());
    expect((await stat(credentialsPath())).mode & 0o777).toBe(0o600);
  });

  it("a session the server no longer accepts exits 3 and is forgotten", async () => {
    const good = await stored();
    await writeFile(
      credentialsPath(),
      JSON.stringify({ ...good, credentials: { ...good.credentials, accessToken: "x", refreshToken: "revoked", expiresAt: 0 } }),
    );
    const r = await tern.run(["devices", "ls"]);
    expect(r.code).toBe(3);
    expect((await stored()).credentials).toBeNull();
    // The server and e-mail stay as defaults of the next login.
    const again = await tern.run(["login", "--password-stdin"], { input: s.admin.password, env: {} });
    expect(again.code, again.stderr).toBe(2); // no --email and no terminal to ask on
    expect((await login()).code).toBe(0);
  });

  it("at a terminal, login asks for the server, the e-mail and the password (not echoed)", async () => {
    const r = await runAtTerminal(
      tern,
      ["login"],
      [
        { expect: /Server URL/, send: `${s.url}\r` },
        { expect: /E-mail/, send: `${s.admin.email}\r` },
        { expect: /Password/, send: `${s.admin.password}\r` },
      ],
    );
    expect(r.code, r.screen).toBe(0);
    expect(r.screen).toContain(`Logged in to ${s.url} as ${s.admin.email}`);
    expect(r.screen).not.toContain(s.admin.password);
    expect((await stored()).credentials.kind).toBe("session");
  });

  it("logout revokes the session on the server: its refresh token stops working", async () => {
    const session = (await stored()).credentials;
    const r = await tern.run(["logout"]);
    expect(r.code, r.stderr).toBe(0);
    expect((await stored()).credentials).toBeNull();
    const refresh = await fetch(`${s.url}/api/users/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshToken: session.refreshToken }),
    });
    expect(refresh.status).toBe(401);
    expect((await tern.run(["devices", "ls"])).code).toBe(3);
  });
});
