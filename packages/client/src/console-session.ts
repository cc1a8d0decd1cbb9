/**
 * The console's browser session (docs: the console contract): sign-in sets an
 * HttpOnly cookie and answers the user, their organizations and the CSRF
 * token that a cookie client sends on writes. These routes are not in the
 * committed OpenAPI document yet, so their shapes are declared here, once.
 */
import { apiErrorFrom } from "./errors.ts";

export interface ConsoleOrganization {
  id: string;
  name: string;
  role: "owner" | "manager" | "viewer";
}

export interface ConsoleSession {
  user: { id: string; email: string; name?: string };
  organizations: ConsoleOrganization[];
  defaultOrgId: string | null;
  csrfToken: string;
}

export interface ConsoleSignIn {
  username: string;
  password: string;
  /** The second factor, when the account has one (the login route's MFA_REQUIRED answer says so). */
  code?: string;
}

export interface Branding {
  productName: string;
  accentColor: string;
  logoUrl: string | null;
}

type Raw = (path: string, init?: RequestInit) => Promise<Response>;

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: apiErrorFrom keeps the text
  }
  if (!response.ok) throw apiErrorFrom(response.status, body);
  return body as T;
}

/** The session routes over a client's raw fetch; `onSession` hears of every new or ended session (its CSRF token). */
export function consoleSessionApi(raw: Raw, onSession: (session: ConsoleSession | null) => void) {
  return {
    /** The current session, or null when the browser is not signed in (401). */
    async current(): Promise<ConsoleSession | null> {
      const response = await raw("/api/console/session");
      if (response.status === 401) {
        await response.body?.cancel();
        onSession(null);
        return null;
      }
      const session = await json<ConsoleSession>(response);
      onSession(session);
      return session;
    },
    async signIn(body: ConsoleSignIn): Promise<ConsoleSession> {
      const response = await raw("/api/console/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const session = await json<ConsoleSession>(response);
      onSession(session);
      return session;
    },
    async signOut(): Promise<void> {
      const response = await raw("/api/console/session", { method: "DELETE" });
      onSession(null);
      if (!response.ok && response.status !== 401) await json(response);
      else await response.body?.cancel();
    },
    async branding(): Promise<Branding> {
      return json<Branding>(await raw("/api/branding"));
    },
  };
}
