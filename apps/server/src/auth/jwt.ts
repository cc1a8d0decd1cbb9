/** Short-lived access JWTs (HS256, key derived from the server key). */
import { sign, verify } from "hono/jwt";

export interface AccessClaims {
  /** User id. */
  sub: string;
  /** Login session (refresh token row): revoking it ends the JWT too. */
  sid: string;
}

const ISSUER = "tern";

export async function signAccessToken(claims: AccessClaims, key: string, ttlSeconds: number, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000);
  return sign({ ...claims, iss: ISSUER, typ: "access", iat, nbf: iat, exp: iat + ttlSeconds }, key, "HS256");
}

/** The claims of a valid, unexpired access token, or null. */
/** `keys`: the current key, or the current and previous keys (a rotated server key's tokens expire naturally). */
export async function verifyAccessToken(token: string, keys: string | readonly string[]): Promise<AccessClaims | null> {
  for (const key of typeof keys === "string" ? [keys] : keys) {
    try {
      const payload = await verify(token, key, { alg: "HS256", iss: ISSUER });
      if (payload.typ !== "access" || typeof payload.sub !== "string" || typeof payload.sid !== "string") return null;
      return { sub: payload.sub, sid: payload.sid };
    } catch {
      // not signed with this key (or expired): try the next
    }
  }
  return null;
}
