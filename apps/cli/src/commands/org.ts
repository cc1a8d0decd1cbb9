/** tern org ls | use: the organizations of the caller and the one commands act in. */
import type { Command } from "@commander-js/extra-typings";
import { type Organization, ok } from "@tern/client";
import { resolveOrg } from "../context.ts";
import { notLoggedIn } from "../exit-codes.ts";
import { credentialsFile, readLogin, writeLogin } from "../support/config-store.ts";
import { contextOf } from "./shared.ts";

export function registerOrg(program: Command<[], { json?: boolean; org?: string }>): void {
  const org = program.command("org").alias("orgs").description("Organizations: list them and choose the one commands act in");

  org
    .command("ls")
    .alias("list")
    .description("List your organizations (* marks the one in use)")
    .action(async (_opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const stored = await readLogin();
      const orgs = await ok(tern.api.GET("/api/organizations", { params: { query: { limit: 1000 } } }));
      const current = tern.org ?? stored?.org?.id;
      const rows = orgs.map((o) => ({ ...o, current: current ? o.id === current : false }));
      ctx.printer.list(
        rows,
        [
          { header: "", value: (o: Organization & { current: boolean }) => (o.current ? "*" : " ") },
          { header: "name", value: (o) => o.name },
          { header: "id", value: (o) => o.id },
          { header: "group", value: (o) => o.group },
          { header: "tunnel range", value: (o) => o.tunnelRange },
        ],
        "no organizations",
      );
    });

  org
    .command("use")
    .description("Act in this organization from now on (id or name); --default goes back to your default one")
    .argument("[organization]", "id or exact name")
    .option("--default", "forget the choice: use your default organization")
    .action(async (ref, opts, command) => {
      const ctx = contextOf(command);
      const file = credentialsFile();
      const stored = await readLogin(file);
      if (!stored?.credentials) throw notLoggedIn();
      if (opts.default || !ref) {
        if (!opts.default)
          command.error("error: name an organization or pass --default", { exitCode: 2, code: "commander.missingArgument" });
        const { org: _dropped, ...rest } = stored;
        await writeLogin(rest, file);
        ctx.printer.result({ org: null }, () => "Using your default organization.");
        return;
      }
      const tern = await ctx.connect();
      tern.org = null;
      const chosen = await resolveOrg(tern, ref);
      // Re-read: the client may have refreshed and stored new tokens meanwhile.
      const latest = (await readLogin(file)) ?? stored;
      await writeLogin({ ...latest, org: { id: chosen.id, name: chosen.name } }, file);
      ctx.printer.result({ org: chosen }, () => `Using organization ${chosen.name} (${chosen.id}).`);
    });
}
