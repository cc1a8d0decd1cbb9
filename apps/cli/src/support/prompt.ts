/**
 * Questions to the user, only when stdin is a terminal: a script that forgot
 * an argument gets a usage error (exit 2) instead of a prompt that hangs.
 */
import input from "@inquirer/input";
import password from "@inquirer/password";
import { usageError } from "../exit-codes.ts";

export const stdinIsTerminal = () => process.stdin.isTTY === true;

export async function ask(
  question: string,
  missing: string,
  options: { secret?: boolean; default?: string } = {},
): Promise<string> {
  if (!stdinIsTerminal()) throw usageError(`${missing} (stdin is not a terminal, so tern does not prompt)`);
  const answer = options.secret
    ? await password({ message: question, mask: "*" })
    : await input({ message: question, default: options.default, required: true });
  return answer.trim();
}

/** All of stdin, trimmed of its final newline (for --password-stdin / --with-token). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}
