/**
 * What every command gets: the printer for --json or tables, and (for
 * commands that call the API) a client logged in from the stored login or
 * from TERN_TOKEN/TERN_SERVER, acting in the organization of --org or of
 * `tern org use`. Refreshed session tokens are written back at once.
 */
import { type Credentials, createTernClient, ok, type TernClient } from "@tern/client";
import { CliError, ExitCode, notLoggedIn, usageError } from "./exit-codes.ts";
import { credentialsFile, readLogin, type StoredLogin, writeLogin } from "./support/config-store.ts";
import { createPrinter, type Printer } from "./support/output.ts";

export interface GlobalOptions {
  json?: boolean;
  /** Organization for this command only (id or name). */
  org?: string;
}

export interface CommandContext {
  printer: Printer;
  options: GlobalOptions;
  /** A logged-in client (exit 3 when there is no login). */
  connect(): Promise<TernClient>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID.test(value);

export function createContext(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): CommandContext {
  const printer = createPrinter(options.json === true);
  let client: Promise<TernClient> | null = null;
  return {
    printer,
    options,
    connect() {
      client ??= connectClient(options, env);
      return client;
    },
  };
}

async function connectClient(options: GlobalOptions, env: NodeJS.ProcessEnv): Promise<TernClient> {
  const file = credentialsFile(env);
  const stored = await readLogin(file);
  let tern: TernClient;
  if (env.TERN_TOKEN) {
    // For scripts and CI: an access token from the environment, never written to disk.
    const server = env.TERN_SERVER ?? stored?.server;
    if (!server) throw usageError("TERN_TOKEN is set but no server: set TERN_SERVER too");
    tern = createTernClient({ baseUrl: server, credentials: { kind: "token", token: env.TERN_TOKEN } });
  } else {
    if (!stored?.credentials) throw notLoggedIn();
    let current: StoredLogin = stored;
    const persist = async (credentials: Credentials | null) => {
      current = { ...current, credentials };
      await writeLogin(current, file);
    };
    tern = createTernClient({
      baseUrl: env.TERN_SERVER ?? stored.server,
      credentials: stored.credentials,
      onCredentials: persist,
      reloadCredentials: async () => (await readLogin(file))?.credentials ?? null,
    });
    if (stored.org) tern.org = stored.org.id;
  }
  if (options.org) tern.org = (await resolveOrg(tern, options.org)).id;
  return tern;
}

/** An organization of the caller by id or exact name. */
export async function resolveOrg(tern: TernClient, ref: string): Promise<{ id: string; name: string }> {
  const orgs = await ok(tern.api.GET("/api/organizations", { params: { query: { limit: 1000 } } }));
  const matches = orgs.filter((o) => o.id === ref || o.name === ref);
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) throw usageError(`several organizations are named "${ref}": use the id`);
  throw new CliError(`no organization "${ref}" (see \`tern org ls\`)`, ExitCode.NOT_FOUND, "NOT_FOUND");
}
