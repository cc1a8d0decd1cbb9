/** @tern/client against a real server on a loopback port. */
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { generate } from "otplib";
import { describe, expect, it } from "vitest";
import { type Credentials, createTernClient, ok, TernApiError, TernConnectionError } from "../src/index.ts";
import { useApiServer } from "./support/api-server.ts";

const s = useApiServer();

async function loggedIn(onCredentials?: (c: Credentials | null) => void) {
  const tern = createTernClient({ baseUrl: `${s.url}/`, onCredentials });
  await tern.login(s.admin.email, s.admin.password);
  return tern;
}

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (err: unknown) => err,
  );
}

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

describe("login and typed calls", () => {
  it("logs in, calls typed operations and reports the session through onCredentials", async () => {
    const seen: (Credentials | null)[] = [];
    const tern = await loggedIn((c) => seen.push(c));
    expect(tern.credentials?.kind).toBe("session");
    expect(seen).toHaveLength(1);
    const orgs = await ok(tern.api.GET("/api/organizations"));
    expect(orgs.length).toBeGreaterThanOrEqual(1);
    const devices = await ok(tern.api.GET("/api/devices", { params: { query: { response: "summary" } } }));
    expect(devices).toEqual([]);
  });

  it("turns the API's error body into a TernApiError with its code", async () => {
    const tern = await loggedIn();
    const err = await errorOf(ok(tern.api.GET("/api/devices/{id}", { params: { path: { id: randomUUID() } } })));
    expect(err).toBeInstanceOf(TernApiError);
    expect((err as TernApiError).code).toBe("NOT_FOUND");
    expect((err as TernApiError).status).toBe(404);

    const invalid = await errorOf(ok(tern.api.POST("/api/accesstokens", { body: { name: "" } })));
    expect((invalid as TernApiError).code).toBe("VALIDATION_FAILED");
    expect((invalid as TernApiError).details?.map((d) => d.path)).toContain("name");
  });

  it("a wrong password is UNAUTHENTICATED and leaves no credentials", async () => {
    const tern = createTernClient({ baseUrl: s.url });
    const err = await errorOf(tern.login(s.admin.email, "not the password"));
    expect((err as TernApiError).code).toBe("UNAUTHENTICATED");
    expect(tern.credentials).toBeNull();
    const anonymous = await errorOf(ok(tern.api.GET("/api/devices")));
    expect((anonymous as TernApiError).code).toBe("UNAUTHENTICATED");
  });

  it("an unreachable server is a TernConnectionError", async () => {
    const tern = createTernClient({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
    expect(await errorOf(tern.login("a@example.com", "x"))).toBeInstanceOf(TernConnectionError);
    expect(await errorOf(ok(tern.api.GET("/api/health")))).toBeInstanceOf(TernConnectionError);
    // Also when the call first has to refresh an expired session.
    const expired = createTernClient({
      baseUrl: tern.baseUrl,
      credentials: { kind: "session", accessToken: "a", refreshToken: "r", expiresAt: 0 },
    });
    expect(await errorOf(ok(expired.api.GET("/api/devices")))).toBeInstanceOf(TernConnectionError);
  });
});

describe("organization", () => {
  it("adds `org` to the operations that take it and acts in that organization", async () => {
    const tern = await loggedIn();
    const created = await ok(tern.api.POST("/api/organizations", { body: { name: `second ${randomUUID().slice(0, 8)}` } }));
    const second = created.id;
    const inDefault = await ok(tern.api.POST("/api/tokens", { body: { name: "in default org" } }));
    tern.org = second;
    const inSecond = await ok(tern.api.POST("/api/tokens", { body: { name: "in second org" } }));
    expect(inSecond.org).toBe(second);
    expect(inDefault.org).not.toBe(second);
    const listed = await ok(tern.api.GET("/api/tokens"));
    expect(listed.map((t) => t.id)).toEqual([inSecond.id]);
    // Operations without the parameter are called without it (an unknown query parameter could be refused).
    const org = await ok(tern.api.GET("/api/organizations/{id}", { params: { path: { id: second } } }));
    expect(org.id).toBe(second);
    // A call naming its own org wins.
    const explicit = await ok(tern.api.GET("/api/tokens", { params: { query: { org: inDefault.org } } }));
    expect(explicit.map((t) => t.id)).toContain(inDefault.id);
  });
});

describe("refresh", () => {
  it("refreshes an access JWT about to expire before the call, once for concurrent calls", async () => {
    const seen: (Credentials | null)[] = [];
    const tern = await loggedIn((c) => seen.push(c));
    const first = tern.credentials as Extract<Credentials, { kind: "session" }>;
    await tern.setCredentials({ ...first, expiresAt: Date.now() + 1_000 });
    seen.length = 0;
    const results = await Promise.all([1, 2, 3].map(() => ok(tern.api.GET("/api/jobs"))));
    expect(results.every(Array.isArray)).toBe(true);
    expect(seen).toHaveLength(1);
    const second = seen[0] as Extract<Credentials, { kind: "session" }>;
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    // The server rotated the refresh token: the old one is refused.
    const reuse = await fetch(`${s.url}/api/users/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshToken: first.refreshToken }),
    });
    expect(reuse.status).toBe(401);
  });

  it("refreshes and retries once when the server answers 401 (a JWT it no longer accepts)", async () => {
    const tern = await loggedIn();
    const session = tern.credentials as Extract<Credentials, { kind: "session" }>;
    await tern.setCredentials({ ...session, accessToken: `${session.accessToken.slice(0, -4)}AAAA` });
    const body = { name: `retried ${randomUUID().slice(0, 8)}` };
    const created = await ok(tern.api.POST("/api/tokens", { body }));
    expect(created.name).toBe(body.name);
    expect((tern.credentials as Extract<Credentials, { kind: "session" }>).refreshToken).not.toBe(session.refreshToken);
  });

  it("a refused refresh ends the session: the call fails UNAUTHENTICATED and the credentials are cleared", async () => {
    const seen: (Credentials | null)[] = [];
    const tern = await loggedIn((c) => seen.push(c));
    const session = tern.credentials as Extract<Credentials, { kind: "session" }>;
    await tern.setCredentials({ ...session, accessToken: "not-a-jwt", refreshToken: "not-a-refresh-token" });
    const err = await errorOf(ok(tern.api.GET("/api/devices")));
    expect((err as TernApiError).code).toBe("UNAUTHENTICATED");
    expect(tern.credentials).toBeNull();
    expect(seen.at(-1)).toBeNull();
  });

  it("logout revokes the session on the server", async () => {
    const tern = await loggedIn();
    const session = tern.credentials as Extract<Credentials, { kind: "session" }>;
    await tern.logout();
    expect(tern.credentials).toBeNull();
    const again = createTernClient({ baseUrl: s.url, credentials: { ...session, expiresAt: 0 } });
    const err = await errorOf(ok(again.api.GET("/api/devices")));
    expect((err as TernApiError).code).toBe("UNAUTHENTICATED");
  });
});

describe("access token (API key)", () => {
  it("authenticates with an access token and its permission masks", async () => {
    const tern = await loggedIn();
    const key = await ok(
      tern.api.POST("/api/accesstokens", { body: { name: "read devices", role: "viewer", permissions: { devices: 1 } } }),
    );
    expect(key.token).toBeTruthy();
    const withKey = createTernClient({ baseUrl: s.url, credentials: { kind: "token", token: key.token } });
    expect(await ok(withKey.api.GET("/api/devices"))).toEqual([]);
    const denied = await errorOf(ok(withKey.api.POST("/api/tokens", { body: { name: "not allowed" } })));
    expect((denied as TernApiError).code).toBe("FORBIDDEN");
  });
});

describe("two-factor sign-in", () => {
  const codeAt = (secret: string, offset: number) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });

  it("asks for the second factor only when the server answers a challenge, then signs in with it", async () => {
    const admin = await loggedIn();
    const enrolment = await ok(admin.api.POST("/api/users/me/mfa/enrol", { body: { password: s.admin.password } }));
    const { recoveryCodes } = await ok(
      admin.api.POST("/api/users/me/mfa/confirm", { body: { code: await codeAt(enrolment.secret, 0) } }),
    );
    try {
      const withoutCode = createTernClient({ baseUrl: s.url });
      const err = await errorOf(withoutCode.login(s.admin.email, s.admin.password));
      expect((err as TernApiError).code).toBe("MFA_REQUIRED");
      expect(withoutCode.credentials).toBeNull();

      let asked = 0;
      const tern = createTernClient({ baseUrl: s.url });
      await tern.login(s.admin.email, s.admin.password, {
        mfaCode: async () => {
          asked += 1;
          return codeAt(enrolment.secret, 1);
        },
      });
      expect(asked).toBe(1);
      expect(tern.credentials?.kind).toBe("session");
      expect((await ok(tern.api.GET("/api/organizations"))).length).toBeGreaterThanOrEqual(1);
    } finally {
      // The later files of this server sign the admin in with a password alone.
      await ok(
        admin.api.POST("/api/users/me/mfa/disable", {
          body: { password: s.admin.password, recoveryCode: recoveryCodes[0] as string },
        }),
      );
    }
  });
});
