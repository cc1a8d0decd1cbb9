/** Where an admin command's password comes from: stdin, a prompt without echo, or generated. */
import { randomBytes } from "node:crypto";
import { Password } from "@tern/protocol";
import { CliError } from "./cli-error.ts";
import { type CliIo, EXIT } from "./io.ts";

/** 24 characters from 18 random bytes (144 bits), as the first start's generated password. */
export const generatePassword = () => randomBytes(18).toString("base64url");

function checked(password: string): string {
  const result = Password.safeParse(password);
  if (!result.success)
    throw new CliError(`the password is not acceptable: ${result.error.issues[0]?.message}`, "choose another", EXIT.usage);
  return password;
}

/** The first line of stdin (`printf '%s\n' "$PW" | tern-server admin …`). */
export async function passwordFromStdin(io: CliIo): Promise<string> {
  const text = await io.readStdin();
  if (text === undefined)
    throw new CliError(
      "--password-stdin needs the password piped in, stdin is a terminal",
      "pipe it in or leave out --password-stdin",
      EXIT.usage,
    );
  return checked(text.split(/\r?\n/)[0] ?? "");
}

/** Asks twice on the terminal; a CliError when there is none. */
export async function passwordFromPrompt(io: CliIo): Promise<string> {
  const first = await io.promptSecret("Password: ");
  if (first === null)
    throw new CliError(
      "no password given and no terminal to ask on",
      "pipe it in with --password-stdin, or use --generate-password",
      EXIT.usage,
    );
  checked(first);
  const again = await io.promptSecret("Password (again): ");
  if (again !== first) throw new CliError("the two passwords differ", "run the command again", EXIT.usage);
  return first;
}
