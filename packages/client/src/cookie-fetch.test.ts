import { describe, expect, it } from "vitest";
import { createTernClient } from "./client.ts";
import { consoleSessionApi } from "./console-session.ts";
import { TernApiError } from "./errors.ts";

/** The browser's fetch, recorded: what the client hands to it is what a browser would send. */
function recorder(answer: (request: Request) => Response = () => Response.json([])) {
  const sent: Request[] = [];
  return {
    sent,
    fetch: async (request: Request) => {
      sent.push(request);
      return answer(request);
    },
  };
}

describe("browser-cookie mode", () => {
  it("sends the page's cookies and no bearer token", async () => {
    const browser = recorder();
    const tern = createTernClient({ baseUrl: "https://tern.example", browserSession: true, fetch: browser.fetch });
    await tern.api.GET("/api/devices", { params: { query: { response: "summary" } } });
    const [request] = browser.sent;
    expect(request?.credentials).toBe("same-origin");
    expect(request?.headers.get("authorization")).toBeNull();
    // a safe method carries no CSRF token
    expect(request?.headers.get("x-csrf-token")).toBeNull();
  });

  it("adds X-CSRF-Token to every unsafe method, read at each request", async () => {
    const browser = recorder(() => new Response(null, { status: 204 }));
    const tern = createTernClient({
      baseUrl: "https://tern.example",
      browserSession: true,
      fetch: browser.fetch,
      org: "0b6c9a3e-1f52-4c1f-9f7e-2d7c1a0e9b11",
    });
    tern.csrfToken = "first";
    await tern.api.PUT("/api/devices/{id}", {
      params: { path: { id: "6f1f0a5e-0d3a-4a0e-8a59-5b7f3c2d1e00" } },
      body: { isApproved: true },
    });
    tern.csrfToken = "second";
    await tern.api.DELETE("/api/devices/{id}", { params: { path: { id: "6f1f0a5e-0d3a-4a0e-8a59-5b7f3c2d1e00" } } });
    await tern.raw("/api/console/session", { method: "POST", body: "{}" });
    expect(browser.sent.map((r) => [r.method, r.headers.get("x-csrf-token")])).toEqual([
      ["PUT", "first"],
      ["DELETE", "second"],
      ["POST", "second"],
    ]);
    // the organization is still added where the operation takes it
    expect(new URL(browser.sent[0]!.url).searchParams.get("org")).toBe("0b6c9a3e-1f52-4c1f-9f7e-2d7c1a0e9b11");
  });

  it("a bearer client is unchanged: no CSRF header, no cookie mode", async () => {
    const browser = recorder(() => new Response(null, { status: 204 }));
    const tern = createTernClient({
      baseUrl: "https://tern.example",
      fetch: browser.fetch,
      credentials: { kind: "token", token: "tok" },
    });
    tern.csrfToken = "ignored";
    await tern.api.DELETE("/api/devices/{id}", { params: { path: { id: "6f1f0a5e-0d3a-4a0e-8a59-5b7f3c2d1e00" } } });
    expect(browser.sent[0]?.headers.get("x-csrf-token")).toBeNull();
  });
});

describe("console session routes", () => {
  const session = { user: { id: "u", email: "a@example.com" }, organizations: [], defaultOrgId: null, csrfToken: "csrf-1" };

  it("sign-in keeps the CSRF token for the writes that follow; sign-out forgets it", async () => {
    const browser = recorder((r) => (r.method === "DELETE" ? new Response(null, { status: 204 }) : Response.json(session)));
    const tern = createTernClient({ baseUrl: "https://tern.example", browserSession: true, fetch: browser.fetch });
    const api = consoleSessionApi(tern.raw, (s) => {
      tern.csrfToken = s?.csrfToken ?? null;
    });
    expect(await api.signIn({ username: "a@example.com", password: "pw" })).toEqual(session);
    expect(await browser.sent[0]?.json()).toEqual({ username: "a@example.com", password: "pw" });
    expect(tern.csrfToken).toBe("csrf-1");
    await api.signOut();
    expect(browser.sent[1]?.headers.get("x-csrf-token")).toBe("csrf-1");
    expect(tern.csrfToken).toBeNull();
  });

  it("current() is null when not signed in, and a refused sign-in is the API's error code", async () => {
    const browser = recorder((r) =>
      r.method === "GET"
        ? Response.json({ error: "sign in first", code: "UNAUTHENTICATED" }, { status: 401 })
        : Response.json({ error: "wrong e-mail or password", code: "UNAUTHENTICATED" }, { status: 401 }),
    );
    const tern = createTernClient({ baseUrl: "https://tern.example", browserSession: true, fetch: browser.fetch });
    const api = consoleSessionApi(tern.raw, () => {});
    expect(await api.current()).toBeNull();
    const refused = await api.signIn({ username: "a@example.com", password: "x" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TernApiError);
    expect((refused as TernApiError).code).toBe("UNAUTHENTICATED");
    expect((refused as TernApiError).status).toBe(401);
  });
});
