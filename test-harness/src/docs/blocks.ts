/**
 * The shell blocks of a Markdown document and the doc-test marker before each
 * (CONTRIBUTING.md, "Executable docs"). Parsed with mdast-util-from-markdown:
 * a regex cannot tell a fence inside a list item, an indented fence or a
 * comment inside a code block from the real thing; the CommonMark parser can.
 */
import type { Code, Html, Nodes, Parents } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";

/** Fence languages that are shell commands a reader may run. */
export const SHELL_LANGS = new Set(["sh", "bash", "shell"]);

export type Marker =
  | { kind: "run" }
  | { kind: "skip"; reason: string }
  | { kind: "covered-by"; file: string; key: string | null }
  | { kind: "invalid"; problem: string };

export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** 1-based line of the block's first command line. */
  firstLine: number;
  code: string;
  marker: Marker | null;
}

export interface DocTestDocument {
  /** `<!-- doc-test: session server|lab -->`: what the runner sets up before the first run block. */
  session: "server" | "lab" | null;
  blocks: ShellBlock[];
}

const MARKER = /^<!--\s*doc-test:\s*([\s\S]*?)\s*-->$/;

/** Parses one marker comment's text (what follows `doc-test:`). */
export function parseMarker(text: string): Marker | { kind: "session"; session: string } {
  const [word = "", ...rest] = text.split(/\s+/);
  const tail = text.slice(word.length).trim();
  switch (word) {
    case "run":
      return rest.length === 0 ? { kind: "run" } : { kind: "invalid", problem: `'run' takes nothing, got '${tail}'` };
    case "skip":
      return tail ? { kind: "skip", reason: tail } : { kind: "invalid", problem: "'skip' needs a reason" };
    case "covered-by": {
      const [file, sep, ...key] = rest;
      if (!file) return { kind: "invalid", problem: "'covered-by' needs a file" };
      if (sep === undefined) return { kind: "covered-by", file, key: null };
      if (sep !== "--" || key.length === 0) return { kind: "invalid", problem: "'covered-by FILE -- KEY COMMAND' expected" };
      return { kind: "covered-by", file, key: key.join(" ") };
    }
    case "session":
      return { kind: "session", session: tail };
    default:
      return { kind: "invalid", problem: `unknown marker '${word}' (run, skip, covered-by, session)` };
  }
}

/** Every shell block of `markdown`, each with the marker comment right before it (same parent), and the session. */
export function docTestBlocks(markdown: string): DocTestDocument {
  const tree = fromMarkdown(markdown);
  const blocks: ShellBlock[] = [];
  let session: DocTestDocument["session"] = null;
  const visit = (parent: Parents) => {
    parent.children.forEach((node: Nodes, i: number) => {
      if (node.type === "html") {
        const m = MARKER.exec(node.value.trim());
        if (m) {
          const parsed = parseMarker(m[1]!);
          if (parsed.kind === "session") {
            if (parsed.session !== "server" && parsed.session !== "lab")
              throw new Error(`line ${node.position?.start.line}: session must be 'server' or 'lab'`);
            session = parsed.session;
          }
        }
      }
      if (node.type === "code" && SHELL_LANGS.has((node.lang ?? "").toLowerCase())) {
        blocks.push(shellBlock(node, parent.children[i - 1]));
      }
      if ("children" in node) visit(node as Parents);
    });
  };
  visit(tree);
  return { session, blocks };
}

function shellBlock(node: Code, before: Nodes | undefined): ShellBlock {
  const line = node.position?.start.line ?? 0;
  let marker: Marker | null = null;
  if (before?.type === "html") {
    const m = MARKER.exec((before as Html).value.trim());
    if (m) {
      const parsed = parseMarker(m[1]!);
      marker = parsed.kind === "session" ? { kind: "invalid", problem: "a session marker is not a block's marker" } : parsed;
    }
  }
  return { line, firstLine: line + 1, code: node.value, marker };
}

/**
 * The command lines of a block: continuation lines (`\`) joined, comment-only
 * lines dropped, a trailing `  # comment` removed (two spaces or more before it,
 * as the docs write them), surrounding space trimmed.
 */
export function commandLines(code: string): string[] {
  const out: string[] = [];
  let pending = "";
  for (const raw of code.split("\n")) {
    const line = pending ? `${pending} ${raw.trim()}` : raw;
    if (/\\\s*$/.test(line)) {
      pending = line.replace(/\s*\\\s*$/, "");
      continue;
    }
    pending = "";
    const cmd = line.replace(/\s{2,}#.*$/, "").trim();
    if (cmd && !cmd.startsWith("#")) out.push(cmd);
  }
  if (pending.trim()) out.push(pending.trim());
  return out;
}
