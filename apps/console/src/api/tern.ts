/**
 * The console's one API client (@tern/client in browser-cookie mode): same
 * origin as the server, the session is the HttpOnly cookie, writes carry the
 * session's CSRF token. Every API call of the console goes through `tern`.
 */
import { consoleSessionApi, createTernClient } from "@tern/client";

export const tern = createTernClient({ baseUrl: window.location.origin, browserSession: true });

export const consoleSession = consoleSessionApi(tern.raw, (session) => {
  tern.csrfToken = session?.csrfToken ?? null;
});
