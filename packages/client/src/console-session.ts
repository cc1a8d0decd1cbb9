/**
 * The console's browser session (docs: the console contract): sign-in sets an
 * HttpOnly cookie and answers the user, their organizations and the CSRF
 * token that a cookie client sends on writes. The shapes are the protocol's
 * (packages/protocol/src/console.ts); the routes are called through the
 * client's raw fetch until the committed OpenAPI document has them.
 */
import type { Branding, ConsoleSession, ConsoleSignIn } from "@tern/protocol";
import { apiErrorFrom } from "./errors.ts";

export type ConsoleOrganization = ConsoleSession["organizations"][number];
export type { Branding, ConsoleSession, ConsoleSignIn };

/** A user with two-factor sign-in first gets this challenge; sign in again with `{ challenge, code }` (or `recoveryCode`). */
export interface MfaChallenge {
  mfaRequired: true;
  challenge: string;
}

export const isMfaChallenge = (answer: ConsoleSession | MfaChallenge): answer is MfaChallenge => "mfaRequired" in answer;

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
    /** Signs in (the cookie is set), or answers the second-factor challenge of a user with 2FA. */
    async signIn(body: ConsoleSignIn): Promise<ConsoleSession | MfaChallenge> {
      const response = await raw("/api/console/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await json<ConsoleSession | MfaChallenge>(response);
      if (!isMfaChallenge(answer)) onSession(answer);
      return answer;
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
