import { describe, expect, it } from "vitest";
import { CommandError, ExecRunner, ExecSpawner } from "../src/runner.ts";

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
  it("writes the input to stdin, and gives a command without input end of input at once", async () => {
    expect((await runner.run(["cat"], { input: "table inet tern {\n}\n" })).stdout).toBe("table inet tern {\n}\n");
    const t0 = performance.now();
    expect(await runner.run(["cat"], { timeoutMs: 5000 })).toMatchObject({ exitCode: 0, stdout: "" });
    expect(performance.now() - t0).toBeLessThan(4000);
  });
  it("passes the caller's environment under LC_ALL=C and keeps multi-byte output whole", async () => {
    const r = await runner.run(["sh", "-c", 'printf "%s %s" "$TERN_X" "$LC_ALL"'], { env: { TERN_X: "x", LC_ALL: "de_DE" } });
    expect(r.stdout).toBe("x C");
    const text = "é→".repeat(50_000); // 250,000 bytes: many pipe reads, some splitting a character
    expect((await runner.run(["cat"], { input: text })).stdout).toBe(text);
  });
  it("fails a command that does not exist with its argv and the reason", async () => {
    const err = (await runner.run(["tern-no-such-command", "-j"]).catch((e: unknown) => e)) as CommandError;
    expect(err).toBeInstanceOf(CommandError);
    expect(err.result.exitCode).not.toBe(0);
    expect(err.message).toMatch(/^tern-no-such-command -j: exit \d+: .*ENOENT/);
  });
});

describe("ExecSpawner", () => {
  const spawner = new ExecSpawner();
  const collect = (argv: string[]) =>
    new Promise<{ lines: string[]; code: number | null }>((resolve) => {
      const lines: string[] = [];
      spawner.spawn(
        argv,
        (l) => lines.push(l),
        (code) => resolve({ lines, code }),
      );
    });
  it("hands over stdout and stderr line by line, each stream on its own, and the exit code", async () => {
    const { lines, code } = await collect(["sh", "-c", "printf 'a1\\na'; printf 'b1\\n' >&2; sleep 0.1; printf '2\\n'; exit 3"]);
    expect(lines.sort()).toEqual(["a1", "a2", "b1"]);
    expect(code).toBe(3);
  });
  it("reports a stopped process as ended without an exit code, and a missing command the same way", async () => {
    const ended = new Promise<number | null>((resolve) => {
      const p = spawner.spawn(["sleep", "10"], () => undefined, resolve);
      setTimeout(() => p.stop(), 50);
    });
    expect(await ended).toBeNull();
    expect((await collect(["tern-no-such-command"])).code).toBeNull();
  });
});
