import { describe, expect, it } from "vitest";
import { CommandError, ExecRunner } from "../src/runner.ts";

describe("ExecRunner", () => {
  const runner = new ExecRunner();
  it("runs argv without a shell and with LC_ALL=C", async () => {
    const r = await runner.run(["sh", "-c", 'printf "%s" "$LC_ALL"']);
    expect(r).toMatchObject({ exitCode: 0, stdout: "C" });
    const literal = await runner.run(["echo", "$HOME; rm -rf /"]);
    expect(literal.stdout).toBe("$HOME; rm -rf /\n");
  });
  it("puts argv, exit code and stderr into errors", async () => {
    const err = await runner.run(["sh", "-c", "echo boom >&2; exit 3"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect((err as CommandError).message).toBe("sh -c echo boom >&2; exit 3: exit 3: boom");
  });
  it("resolves failures when asked", async () => {
    expect((await runner.run(["false"], { allowFailure: true })).exitCode).toBe(1);
  });
  it("kills a command at its time-out", async () => {
    const err = (await runner.run(["sleep", "5"], { timeoutMs: 100 }).catch((e: unknown) => e)) as CommandError;
    expect(err.result.stderr).toMatch(/timed out after 100 ms/);
  });
});
