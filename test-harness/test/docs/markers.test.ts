/**
 * The doc-test markers (CONTRIBUTING.md, "Executable docs"): every shell block
 * of README.md and docs/*.md says whether the docs test runs it, why it is
 * skipped, or which file runs its commands. Fast: parsing only.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandLines, docTestBlocks, parseMarker } from "../../src/docs/blocks.ts";

const REPO = join(import.meta.dirname, "..", "..", "..");
const DOCUMENTS = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** What is wrong with the markers of one document, one line per problem. */
function problems(name: string, markdown: string): string[] {
  const out: string[] = [];
  const doc = docTestBlocks(markdown);
  for (const b of doc.blocks) {
    const at = `${name}:${b.line}`;
    const m = b.marker;
    if (!m) {
      out.push(`${at}: shell block without a <!-- doc-test: … --> marker`);
      continue;
    }
    if (m.kind === "invalid") out.push(`${at}: ${m.problem}`);
    if (m.kind === "run") {
      if (!doc.session) out.push(`${at}: a run block in a document without <!-- doc-test: session server|lab -->`);
      // A placeholder in a command cannot run: each step takes what it needs from the previous one.
      for (const cmd of commandLines(b.code))
        if (/…|<[a-z][a-z -]*>/.test(cmd)) out.push(`${at}: placeholder in a run block: ${cmd}`);
    }
    if (m.kind === "covered-by") {
      const file = join(REPO, m.file);
      if (!existsSync(file)) {
        out.push(`${at}: covered-by ${m.file}: no such file`);
        continue;
      }
      const text = readFileSync(file, "utf8");
      if (m.key !== null) {
        if (!b.code.includes(m.key)) out.push(`${at}: the key command '${m.key}' is not in the block`);
        if (!text.includes(m.key)) out.push(`${at}: covered-by ${m.file}: '${m.key}' is not in that file`);
      } else {
        for (const cmd of commandLines(b.code))
          if (!text.includes(cmd)) out.push(`${at}: covered-by ${m.file}: '${cmd}' is not in that file`);
      }
    }
  }
  return out;
}

describe("doc-test markers", () => {
  it("every shell block of README.md and docs/*.md has a valid marker", () => {
    expect(DOCUMENTS).toContain("docs/server.md");
    const all = DOCUMENTS.flatMap((d) => problems(d, readFileSync(join(REPO, d), "utf8")));
    expect(all).toEqual([]);
  });

  it("finds blocks inside list items and reads the marker right before each", () => {
    const md = [
      "<!-- doc-test: session server -->",
      "1. step",
      "",
      "   <!-- doc-test: run -->",
      "   ```sh",
      "   echo one",
      "   ```",
      "",
      "```bash",
      "echo two",
      "```",
      "",
      "<!-- doc-test: skip needs a cellular modem -->",
      "",
      "```shell",
      "mmcli -L",
      "```",
      "",
      "```text",
      "not a shell block",
      "```",
    ].join("\n");
    const doc = docTestBlocks(md);
    expect(doc.session).toBe("server");
    expect(doc.blocks.map((b) => [b.line, b.code, b.marker])).toEqual([
      [5, "echo one", { kind: "run" }],
      [9, "echo two", null],
      [15, "mmcli -L", { kind: "skip", reason: "needs a cellular modem" }],
    ]);
  });

  it("reports a block without a marker, a skip without a reason, and a covered-by file that lacks the command", () => {
    const md = [
      "```sh",
      "echo unmarked",
      "```",
      "<!-- doc-test: skip -->",
      "```sh",
      "echo skipped",
      "```",
      "<!-- doc-test: covered-by .ci/run -->",
      "```sh",
      "npm run package",
      "echo not in ci",
      "```",
      "<!-- doc-test: covered-by .ci/run -- npm test -->",
      "```sh",
      "npm ci && npm test   # every test",
      "```",
      "<!-- doc-test: covered-by no/such/file.sh -->",
      "```sh",
      "true",
      "```",
    ].join("\n");
    expect(problems("t.md", md)).toEqual([
      "t.md:1: shell block without a <!-- doc-test: … --> marker",
      "t.md:5: 'skip' needs a reason",
      "t.md:9: covered-by .ci/run: 'echo not in ci' is not in that file",
      "t.md:18: covered-by no/such/file.sh: no such file",
    ]);
  });

  it("refuses placeholders in run blocks and run blocks outside a session", () => {
    const md = ["<!-- doc-test: run -->", "```sh", 'curl -d \'{"token":"tern_rt_…"}\' "$B/x"', "```"].join("\n");
    expect(problems("t.md", md)).toEqual([
      "t.md:2: a run block in a document without <!-- doc-test: session server|lab -->",
      `t.md:2: placeholder in a run block: curl -d '{"token":"tern_rt_…"}' "$B/x"`,
    ]);
  });

  it("parses the marker grammar", () => {
    expect(parseMarker("covered-by .ci/run -- npm ci && npm test")).toEqual({
      kind: "covered-by",
      file: ".ci/run",
      key: "npm ci && npm test",
    });
    expect(parseMarker("run now")).toMatchObject({ kind: "invalid" });
    expect(parseMarker("maybe")).toMatchObject({ kind: "invalid" });
    expect(commandLines("a \\\n  --b  # c\n# only a comment\nd  # e")).toEqual(["a --b", "d"]);
  });
});
