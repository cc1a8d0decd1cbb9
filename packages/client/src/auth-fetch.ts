/**
 * The fetch every request of the client goes through: adds the bearer token,
 * retries once after a refresh when the server answers 401, and turns a
 * failed connection into TernConnectionError. Uses only the fetch API, so it
 * runs in Node and in a browser alike.
 */
import { TernConnectionError } from "./errors.ts";
import type { Session } from "./session.ts";

export type FetchLike = (request: Request) => Promise<Response>;

/** fetch whose failure to get any answer is a TernConnectionError (an aborted request stays an abort). */
export function connectionGuard(baseFetch: FetchLike): FetchLike {
  return async (request) => {
    try {
      return await baseFetch(request);
    } catch (err) {
      if (request.signal?.aborted) throw err;
      throw new TernConnectionError(new URL(request.url).origin, { cause: err });
    }
  };
}

/** `send` must be connection-guarded (see connectionGuard). */
export function authFetch(session: Session, send: FetchLike): FetchLike {
  return async (request) => {
    // The body can be read once: keep a copy for the retry.
    const replay = request.clone();
    const token = await session.bearer();
    if (token) request.headers.set("authorization", `Bearer ${token}`);
    const response = await send(request);
    if (response.status !== 401 || !token || !(await session.refreshAfter(token))) return response;
    const fresh = await session.bearer();
    if (!fresh) return response;
    await response.body?.cancel();
    replay.headers.set("authorization", `Bearer ${fresh}`);
    return send(replay);
  };
}
