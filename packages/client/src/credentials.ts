/** What the client authenticates with: a login session (refreshable) or an access token (API key). */
import type { TokenPair } from "./types.ts";

export type Credentials =
  | {
      kind: "session";
      accessToken: string;
      refreshToken: string;
      /** When the access JWT expires, in ms since the epoch (from the pair's expiresIn at receipt). */
      expiresAt: number;
    }
  | {
      /** An access token (API key) created with POST /api/accesstokens; it is not refreshed. */
      kind: "token";
      token: string;
    };

/** A login or refresh answer as session credentials; `now` is when it was received. */
export function sessionFromPair(pair: TokenPair, now = Date.now()): Credentials {
  return {
    kind: "session",
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    expiresAt: now + pair.expiresIn * 1000,
  };
}

export function bearerOf(credentials: Credentials): string {
  return credentials.kind === "session" ? credentials.accessToken : credentials.token;
}
