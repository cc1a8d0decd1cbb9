/** The command tree of `tern`: `noun verb` commands like gh, kubectl and tailscale. */
import { Command } from "@commander-js/extra-typings";
import { registerCompletion } from "./commands/completion.ts";
import { registerDevices } from "./commands/devices.ts";
import { registerJobs } from "./commands/jobs.ts";
import { registerLogin } from "./commands/login.ts";
import { registerNotifications } from "./commands/notifications.ts";
import { registerOrg } from "./commands/org.ts";
import { registerTokens } from "./commands/tokens.ts";
import { registerTunnels } from "./commands/tunnels.ts";
import { VERSION } from "./version.ts";

export function buildProgram() {
  const program = new Command("tern")
    .description("Manage a Tern SD-WAN fleet from the command line")
    .version(VERSION, "-V, --version")
    .option("--json", "print results as JSON (for scripts)")
    .option("--org <organization>", "act in this organization for this command (id or name)")
    // Inherited by every subcommand made with .command() below: usage errors reach main.ts instead of exiting.
    .exitOverride()
    .showSuggestionAfterError()
    .configureHelp({ sortSubcommands: false, showGlobalOptions: true })
    .addHelpText(
      "after",
      "\nExit codes: 0 ok, 1 API error, 2 usage, 3 not logged in, 4 not found, 5 forbidden, 6 server unreachable, 7 job failed.\nDocs: docs/cli.md",
    );
  registerLogin(program);
  registerOrg(program);
  registerDevices(program);
  registerTunnels(program);
  registerJobs(program);
  registerNotifications(program);
  registerTokens(program);
  registerCompletion(program);
  return program;
}
