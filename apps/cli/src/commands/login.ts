/** tern login / tern logout: the stored login (see support/config-store.ts). */
import type { Command } from "@commander-js/extra-typings";
import { type Credentials, createTernClient, ok, type TernClient } from "@tern/client";
import { usageError } from "../exit-codes.ts";
import { credentialsFile, readLogin, writeLogin } from "../support/config-store.ts";
import { ask, readStdin, stdinIsTerminal } from "../support/prompt.ts";
import { contextOf } from "./shared.ts";

export const DEFAULT_SERVER = "http://127.0.0.1:3000";

function normalizeServer(value: string): string {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    throw usageError(`not a server URL: ${value}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw usageError(`not an http(s) URL: ${value}`);
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/** A password login; a user with two-factor sign-in gives --code, or is asked for it at a terminal. */
async function passwordLogin(tern: TernClient, email: string, password: string, code: string | undefined): Promise<void> {
  await tern.login(email, password, {
    mfaCode: code ?? (() => ask("Two-factor code:", "this account needs a two-factor code: pass --code")),
  });
}

export function registerLogin(program: Command<[], { json?: boolean; org?: string }>): void {
  program
    .command("login")
    .description("Log in to a Tern server and store the session (0600) under the user's config directory")
    .option("-s, --server <url>", `server URL (default: the last one, else ${DEFAULT_SERVER})`)
    .option("-e, --email <email>", "e-mail of the user")
    .option("--password-stdin", "read the password from stdin (for scripts)")
    .option("--with-token", "read an access token (API key) from stdin instead of logging in with a password")
    .option("--code <code>", "two-factor code (TOTP or a recovery code), for a user with two-factor sign-in")
    .action(async (opts, command) => {
      const ctx = contextOf(command);
      const file = credentialsFile();
      const previous = await readLogin(file);
      const server = normalizeServer(
        opts.server ??
          (stdinIsTerminal() && !opts.passwordStdin && !opts.withToken
            ? await ask("Server URL:", "", { default: previous?.server ?? DEFAULT_SERVER })
            : (previous?.server ?? DEFAULT_SERVER)),
      );
      let credentials: Credentials | null;
      let email: string | undefined;
      const tern = createTernClient({ baseUrl: server });
      if (opts.withToken) {
        if (stdinIsTerminal()) throw usageError("--with-token reads the token from stdin: pipe it in");
        const token = (await readStdin()).trim();
        if (!token) throw usageError("--with-token: stdin was empty");
        await tern.setCredentials({ kind: "token", token });
        // Proves the token before storing it.
        await ok(tern.api.GET("/api/organizations", { params: { query: { limit: 1 } } }));
        credentials = tern.credentials;
      } else {
        email = opts.email ?? (await ask("E-mail:", "--email is required", { default: previous?.email }));
        const password = opts.passwordStdin
          ? await readStdin()
          : await ask("Password:", "no password: pass --password-stdin and pipe it in", { secret: true });
        if (!password) throw usageError("empty password");
        await passwordLogin(tern, email, password, opts.code);
        credentials = tern.credentials;
      }
      // The chosen organization belongs to one user on one server.
      const sameUser = previous?.server === server && previous.email === email;
      await writeLogin(
        { server, ...(email ? { email } : {}), credentials, ...(sameUser && previous.org ? { org: previous.org } : {}) },
        file,
      );
      const org = sameUser ? previous.org : undefined;
      ctx.printer.result({ server, email: email ?? null, org: org ?? null, file }, () =>
        [`Logged in to ${server}${email ? ` as ${email}` : " with an access token"}.`, org ? `Organization: ${org.name}` : ""]
          .filter(Boolean)
          .join("\n"),
      );
    });

  program
    .command("logout")
    .description("Revoke the stored session on the server and forget it")
    .action(async (_opts, command) => {
      const ctx = contextOf(command);
      const file = credentialsFile();
      const stored = await readLogin(file);
      if (!stored?.credentials) {
        ctx.printer.result({ loggedOut: false }, () => "Not logged in.");
        return;
      }
      const tern = createTernClient({ baseUrl: stored.server, credentials: stored.credentials });
      let revoked = true;
      try {
        await tern.logout();
      } catch (err) {
        // The local session is forgotten anyway; say that the server did not hear of it.
        revoked = false;
        ctx.printer.note(`warning: the server did not revoke the session: ${(err as Error).message}`);
      }
      await writeLogin({ ...stored, credentials: null }, file);
      ctx.printer.result({ loggedOut: true, revoked }, () => `Logged out of ${stored.server}.`);
    });
}
