/**
 * `tern-server admin create-user` and `admin reset-password`: user
 * administration on the database itself, for when nobody can log in to the API
 * (first owner of a new account, an owner locked out). Both are audited.
 */
import { Email, Role } from "@tern/protocol";
import { CreateUserError, createUser, type Membership } from "../services/user-admin/create-user.ts";
import { resetPassword, UserNotFoundError } from "../services/user-admin/reset-password.ts";
import { CliError } from "./cli-error.ts";
import { withDatabase } from "./database.ts";
import { type CliIo, EXIT } from "./io.ts";
import { generatePassword, passwordFromPrompt, passwordFromStdin } from "./password-input.ts";
import { type GlobalOptions, loadSettings } from "./settings.ts";

function email(text: string): string {
  const result = Email.safeParse(text);
  if (!result.success)
    throw new CliError(`${JSON.stringify(text)} is not an e-mail address`, "users log in with their e-mail address", EXIT.usage);
  return result.data;
}

function role(text: string | undefined): Role {
  const result = Role.safeParse(text ?? "viewer");
  if (!result.success)
    throw new CliError(`unknown role ${JSON.stringify(text)}`, `use one of ${Role.options.join(", ")}`, EXIT.usage);
  return result.data;
}

export interface CreateUserOptions {
  email: string;
  name?: string;
  passwordStdin?: boolean;
  generatePassword?: boolean;
  newAccount?: string;
  orgName?: string;
  account?: string;
  org?: string;
  role?: string;
  json?: boolean;
}

function membershipOf(o: CreateUserOptions): Membership {
  const chosen = [o.newAccount, o.account, o.org].filter((v) => v !== undefined).length;
  if (chosen > 1) throw new CliError("--new-account, --account and --org exclude each other", "choose one", EXIT.usage);
  if (o.role && !(o.account || o.org))
    throw new CliError("--role needs --account or --org", "the owner of a --new-account is its owner", EXIT.usage);
  if (o.newAccount !== undefined)
    return { kind: "new-account", accountName: o.newAccount, orgName: o.orgName ?? "Default organization" };
  if (o.account) return { kind: "account", accountId: o.account, role: role(o.role) };
  if (o.org) return { kind: "organization", orgId: o.org, role: role(o.role) };
  return { kind: "none" };
}

export async function adminCreateUser(io: CliIo, globals: GlobalOptions, o: CreateUserOptions): Promise<number> {
  const config = await loadSettings(io, globals);
  const address = email(o.email);
  const membership = membershipOf(o);
  if (o.passwordStdin && o.generatePassword)
    throw new CliError("--password-stdin and --generate-password exclude each other", "choose one", EXIT.usage);
  const generated = o.generatePassword ? generatePassword() : null;
  const password = generated ?? (o.passwordStdin ? await passwordFromStdin(io) : await passwordFromPrompt(io));

  const created = await withDatabase(config, { what: "create a user", requireCurrentSchema: true }, async (h) => {
    try {
      return await createUser(h.db, {
        email: address,
        name: o.name ?? "",
        password,
        passwordHashCost: config.TERN_PASSWORD_HASH_COST,
        membership,
      });
    } catch (err) {
      if (err instanceof CreateUserError)
        throw new CliError(
          err.message,
          err.reason === "email-taken"
            ? "use `tern-server admin reset-password` to give them a new password"
            : "list ids with GET /api/accounts or /api/organizations",
        );
      throw err;
    }
  });
  if (o.json) {
    io.out(
      `${JSON.stringify({ id: created.userId, email: address, accountId: created.accountId, orgId: created.orgId, ...(generated ? { password: generated } : {}) })}\n`,
    );
    return 0;
  }
  io.out(`created user ${address} (id ${created.userId})\n`);
  if (membership.kind === "new-account")
    io.out(`  owner of the new account ${created.accountId} with organization ${created.orgId}\n`);
  else if (membership.kind === "account") io.out(`  ${membership.role} of account ${created.accountId}\n`);
  else if (membership.kind === "organization") io.out(`  ${membership.role} of organization ${created.orgId}\n`);
  else io.out("  member of nothing yet: add them to an organization (POST /api/members) or use --org/--account/--new-account\n");
  if (generated) io.out(`  password: ${generated}\n  (shown only now)\n`);
  return 0;
}

export interface ResetPasswordOptions {
  passwordStdin?: boolean;
  keepApiKeys?: boolean;
  json?: boolean;
}

export async function adminResetPassword(
  io: CliIo,
  globals: GlobalOptions,
  emailText: string,
  o: ResetPasswordOptions,
): Promise<number> {
  const config = await loadSettings(io, globals);
  const address = email(emailText);
  const generated = o.passwordStdin ? null : generatePassword();
  const password = generated ?? (await passwordFromStdin(io));
  const result = await withDatabase(config, { what: "reset a password", requireCurrentSchema: true }, async (h) => {
    try {
      return await resetPassword(h.db, {
        email: address,
        password,
        passwordHashCost: config.TERN_PASSWORD_HASH_COST,
        keepApiKeys: o.keepApiKeys ?? false,
      });
    } catch (err) {
      if (err instanceof UserNotFoundError) throw new CliError(err.message, "check the address (letter case matters)");
      throw err;
    }
  });
  if (o.json) {
    io.out(
      `${JSON.stringify({ id: result.userId, email: address, sessionsRevoked: result.sessions, apiKeysDeleted: result.apiKeys.map((k) => ({ id: k.id, name: k.name })), ...(generated ? { password: generated } : {}) })}\n`,
    );
    return 0;
  }
  io.out(`new password set for ${address}\n`);
  io.out(`  ${result.sessions} session(s) revoked`);
  io.out(
    o.keepApiKeys
      ? ", API keys kept\n"
      : `, ${result.apiKeys.length} API key(s) deleted${result.apiKeys.length ? `: ${result.apiKeys.map((k) => k.name).join(", ")}` : ""}\n`,
  );
  if (generated) io.out(`  password: ${generated}\n  (shown only now)\n`);
  return 0;
}
