/**
 * A real OpenID Connect provider (panva's oidc-provider) on a loopback port,
 * for single sign-on tests: one confidential client, accounts the test adds,
 * and a browser stand-in that follows redirects with a cookie jar and submits
 * the provider's development login and consent forms.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface IdpAccount {
  email: string;
  emailVerified: boolean;
  name?: string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, IdpAccount>;
  close(): Promise<void>;
}

export async function startTestIdp(redirectUri: string): Promise<TestIdp> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = "tern-test";
  const clientSecret = "a-test-client-secret-of-some-length";
  const accounts = new Map<string, IdpAccount>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: account.email, email_verified: account.emailVerified, name: account.name ?? id };
        },
      };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    features: { devInteractions: { enabled: true } },
    pkce: { methods: ["S256"], required: () => true },
    cookies: { keys: ["test-cookie-signing-key"] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  });
  handler = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Plays the browser at the provider: from its authorization URL, through the
 * login form (as `accountId`) and the consent form, to the redirect back to
 * `redirectPrefix`, which is returned (not followed). `abort` cancels at the login form.
 */
export async function browseProvider(
  authorizationUrl: string,
  redirectPrefix: string,
  accountId: string,
  abort = false,
): Promise<URL> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  };
  let url = new URL(authorizationUrl);
  let method = "GET";
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.href.startsWith(redirectPrefix)) return url;
    const res = await fetch(url, {
      method,
      redirect: "manual",
      headers: { cookie: cookieHeader(), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      body,
    });
    remember(res);
    method = "GET";
    body = undefined;
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`provider answered ${res.status} at ${url.pathname}: ${html.slice(0, 300)}`);
    // The development interactions: a login form, then a consent form, both posting back to the page's URL.
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (prompt === "login" && abort) {
      url = new URL(`${url.pathname}/abort`, url);
    } else if (prompt === "login") {
      method = "POST";
      body = new URLSearchParams({ prompt: "login", login: accountId, password: "any" }).toString();
    } else if (prompt === "consent") {
      method = "POST";
      body = new URLSearchParams({ prompt: "consent" }).toString();
    } else {
      throw new Error(`unexpected provider page at ${url.pathname}: ${html.slice(0, 300)}`);
    }
  }
  throw new Error("too many redirects at the provider");
}
