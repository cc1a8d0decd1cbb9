/**
 * The fetch of a client running in the console (a browser page served by the
 * Tern server): the signed-in user is the HttpOnly session cookie, never a
 * token the page can read, so each request is sent with the page's cookies
 * (`credentials: "same-origin"`), and every unsafe request (anything but GET,
 * HEAD, OPTIONS) carries the session's CSRF token in `X-CSRF-Token`, which
 * the server requires for cookie-authenticated writes.
 */
import type { FetchLike } from "./auth-fetch.ts";

export const CSRF_HEADER = "X-CSRF-Token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** `csrfToken` is read at each request: the token changes when the session does. */
export function cookieFetch(send: FetchLike, csrfToken: () => string | null): FetchLike {
  return (request) => {
    const withCookies = new Request(request, { credentials: "same-origin" });
    if (!SAFE_METHODS.has(withCookies.method.toUpperCase())) {
      const token = csrfToken();
      if (token) withCookies.headers.set(CSRF_HEADER, token);
    }
    return send(withCookies);
  };
}
