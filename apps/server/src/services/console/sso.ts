/**
 * SSO sign-in started from the console (`?console=1`): the callback puts the
 * session into the console cookie and sends the browser back into the console
 * instead of answering tokens as JSON.
 */
import type { LoginResult } from "@tern/protocol";
import type { Context } from "hono";
import { setConsoleCookie } from "../../auth/console-cookie.ts";
import type { AppEnv } from "../../http/env.ts";
import { ApiError } from "../../http/errors.ts";

/** Marks an SSO sign-in as started by the console (only chooses the callback's answer). */
export const SSO_CONSOLE_COOKIE = "tern_sso_console";

/** Where to send the browser: `/` signed in, the sign-in page with the 2FA challenge (in the fragment, never sent to a server), or with the error code. */
export async function finishConsoleSso(c: Context<AppEnv>, signIn: Promise<LoginResult>): Promise<string> {
  let result: LoginResult;
  try {
    result = await signIn;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    c.get("logger").info({ code: err.code }, "console SSO sign-in refused");
    return `/signin?ssoError=${encodeURIComponent(err.code)}`;
  }
  if ("mfaRequired" in result) return `/signin#mfaChallenge=${encodeURIComponent(result.challenge)}`;
  setConsoleCookie(c, result.refreshToken);
  return "/";
}
