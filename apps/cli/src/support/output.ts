/**
 * How results reach the user: a borderless table (kubectl/gh style) or
 * key-value lines for people, one JSON document for scripts (--json).
 * Results go to stdout; progress, hints and errors to stderr.
 */
import Table from "cli-table3";

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

function cell(value: unknown): string {
  if (value === null || value === undefined || value === "") return "-";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(cell).join(", ") : "-";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const BORDERLESS = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "   ",
};

export function renderTable<T>(columns: Column<T>[], rows: readonly T[]): string {
  const table = new Table({
    head: columns.map((c) => c.header.toUpperCase()),
    chars: BORDERLESS,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
  });
  for (const row of rows) table.push(columns.map((c) => cell(c.value(row))));
  // cli-table3 pads the last column too: trim each line's end.
  return table
    .toString()
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n");
}

export function renderFields(fields: [label: string, value: unknown][]): string {
  const width = Math.max(...fields.map(([l]) => l.length));
  return fields.map(([l, v]) => `${`${l}:`.padEnd(width + 2)}${cell(v)}`).join("\n");
}

export interface Printer {
  json: boolean;
  /** A result: `data` as JSON with --json, else what `human` renders. */
  result<T>(data: T, human: (data: T) => string): void;
  /** A list: JSON array, or a table (with `empty` when there are no rows). */
  list<T>(rows: readonly T[], columns: Column<T>[], empty: string): void;
  /** A note for people on stderr (never in the way of --json on stdout). */
  note(text: string): void;
}

export function createPrinter(json: boolean, stdout: NodeJS.WritableStream = process.stdout, stderr = process.stderr): Printer {
  const line = (stream: NodeJS.WritableStream, text: string) => stream.write(text.endsWith("\n") ? text : `${text}\n`);
  return {
    json,
    result(data, human) {
      line(stdout, json ? JSON.stringify(data, null, 2) : human(data));
    },
    list(rows, columns, empty) {
      if (json) line(stdout, JSON.stringify(rows, null, 2));
      else if (rows.length === 0) line(stderr, empty);
      else line(stdout, renderTable(columns, rows));
    },
    note(text) {
      line(stderr, text);
    },
  };
}
