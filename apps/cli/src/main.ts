/**
 * Entry point of `tern`: runs the command and turns every outcome into an
 * exit code from exit-codes.ts. Errors go to stderr as one line (as JSON with
 * --json), never a stack trace unless TERN_DEBUG=1.
 */
import { CommanderError } from "commander";
import { classify, ExitCode } from "./exit-codes.ts";
import { buildProgram } from "./program.ts";

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const json = argv.includes("--json");
  try {
    await program.parseAsync(argv, { from: "user" });
    return ExitCode.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander has printed the message or the help already.
      return err.code === "commander.helpDisplayed" || err.code === "commander.version" ? ExitCode.OK : ExitCode.USAGE;
    }
    if (err instanceof Error && err.name === "ExitPromptError") return ExitCode.INTERRUPTED;
    const { exitCode, code, message } = classify(err);
    if (process.env.TERN_DEBUG === "1" && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.stderr.write(json ? `${JSON.stringify({ error: message, code, exitCode })}\n` : `tern: ${message}\n`);
    return exitCode;
  }
}

process.on("SIGINT", () => process.exit(ExitCode.INTERRUPTED));
// Exit now rather than when the event loop drains: a prompt or spinner holding the terminal must not keep tern alive.
// (Writes to stdout and stderr are synchronous on Linux for files, pipes and terminals, so nothing is cut short.)
process.exit(await main(process.argv.slice(2)));
