/**
 * Finds the fields of an input that its zod schema does not know. zod objects
 * strip unknown keys silently, so a misspelled field (`maxLossPct`) would be
 * dropped and the request answered 200; the input guard turns what this finds
 * into a 400 naming the field and the closest known one.
 *
 * It walks the schema the route declares instead of rewriting it as strict
 * copies, so the OpenAPI document, named components and every later route stay
 * as they are. Objects declared open (z.looseObject / .catchall()) accept any key.
 */
import { closest, distance } from "fastest-levenshtein";

/** One field the schema does not know: where its object is, its name, and the names that object knows. */
export interface UnknownField {
  path: readonly (string | number)[];
  key: string;
  known: readonly string[];
}

/** The parts of a zod 4 schema this walker reads (zod's `_zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  element?: Schema;
  items?: Schema[];
  rest?: Schema | null;
  valueType?: Schema;
  options?: Schema[];
  innerType?: Schema;
  in?: Schema;
  left?: Schema;
  right?: Schema;
  getter?: () => Schema;
}
interface Schema {
  _zod: { def: Def };
}

type Kind = "object" | "array" | "scalar" | "any";

function defOf(schema: unknown): Def | null {
  return (schema as Schema | undefined)?._zod?.def ?? null;
}

const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional", "success"]);

/** The JSON kinds a schema can accept, to pick the options of a union that apply to a value. */
function kinds(schema: Schema, seen = new Set<Schema>()): Set<Kind> {
  const def = defOf(schema);
  if (!def || seen.has(schema)) return new Set(["any"]);
  seen.add(schema);
  switch (def.type) {
    case "object":
    case "record":
      return new Set(["object"]);
    case "array":
    case "tuple":
      return new Set(["array"]);
    case "union":
      return new Set((def.options ?? []).flatMap((o) => [...kinds(o, seen)]));
    case "lazy":
      return def.getter ? kinds(def.getter(), seen) : new Set(["any"]);
    case "pipe":
      return def.in ? kinds(def.in, seen) : new Set(["any"]);
    case "intersection":
      return def.left ? kinds(def.left, seen) : new Set(["any"]);
    case "any":
    case "unknown":
    case "custom":
    case "transform":
      return new Set(["any"]);
    default:
      if (WRAPPERS.has(def.type) && def.innerType) return kinds(def.innerType, seen);
      return new Set(["scalar"]);
  }
}

function kindOfValue(value: unknown): Kind {
  if (Array.isArray(value)) return "array";
  if (value !== null && typeof value === "object") return "object";
  return "scalar";
}

const keyOf = (f: UnknownField) => `${f.path.join("\u0001")}\u0000${f.key}`;

/** Unknown fields of `value` under `schema`, depth first. */
export function findUnknownFields(schema: unknown, value: unknown, path: (string | number)[] = []): UnknownField[] {
  const def = defOf(schema);
  if (!def || value === null || typeof value !== "object") return [];
  switch (def.type) {
    case "object": {
      if (Array.isArray(value)) return [];
      const shape = def.shape ?? {};
      // A catchall other than never (looseObject, .catchall(x)) accepts any other key.
      const open = def.catchall !== undefined && defOf(def.catchall)?.type !== "never";
      const out: UnknownField[] = [];
      for (const [key, child] of Object.entries(value)) {
        // Own properties only: `constructor` or `toString` are not fields of a shape.
        if (Object.hasOwn(shape, key)) out.push(...findUnknownFields(shape[key], child, [...path, key]));
        else if (!open) out.push({ path, key, known: Object.keys(shape) });
      }
      return out;
    }
    case "record":
      if (Array.isArray(value)) return [];
      return Object.entries(value).flatMap(([k, v]) => findUnknownFields(def.valueType, v, [...path, k]));
    case "array":
      if (!Array.isArray(value)) return [];
      return value.flatMap((v, i) => findUnknownFields(def.element, v, [...path, i]));
    case "tuple":
      if (!Array.isArray(value)) return [];
      return value.flatMap((v, i) => findUnknownFields(def.items?.[i] ?? def.rest ?? undefined, v, [...path, i]));
    case "union": {
      const kind = kindOfValue(value);
      const applicable = (def.options ?? []).filter((o) => {
        const k = kinds(o);
        return k.has(kind) || k.has("any");
      });
      let best: UnknownField[] | null = null;
      for (const option of applicable) {
        const found = findUnknownFields(option, value, path);
        if (found.length === 0) return [];
        if (!best || found.length < best.length) best = found;
      }
      return best ?? [];
    }
    case "intersection": {
      // A key is unknown only when neither side knows it.
      const right = new Set(findUnknownFields(def.right, value, path).map(keyOf));
      return findUnknownFields(def.left, value, path).filter((f) => right.has(keyOf(f)));
    }
    case "lazy":
      return def.getter ? findUnknownFields(def.getter(), value, path) : [];
    case "pipe":
      // A preprocess (transform first) changes the value before the schema sees it: not walkable.
      return defOf(def.in)?.type === "transform" ? [] : findUnknownFields(def.in, value, path);
    default:
      return WRAPPERS.has(def.type) && def.innerType ? findUnknownFields(def.innerType, value, path) : [];
  }
}

/** The known name closest to a misspelled one, when it is close enough to be a likely typo. */
export function closestKnown(key: string, known: readonly string[]): string | null {
  if (known.length === 0) return null;
  const lower = key.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  const prefix = known.filter((k) => lower.startsWith(k.toLowerCase()) || k.toLowerCase().startsWith(lower));
  if (prefix.length) return prefix.sort((a, b) => distance(key, a) - distance(key, b))[0]!;
  const best = closest(key, known as string[]);
  return distance(key, best) <= Math.max(2, Math.floor(Math.max(key.length, best.length) / 3)) ? best : null;
}

/** The message of one unknown field: "unknown field maxLossPct; did you mean maxLoss?" */
export function unknownFieldMessage(field: UnknownField): string {
  const near = closestKnown(field.key, field.known);
  return near ? `unknown field ${field.key}; did you mean ${near}?` : `unknown field ${field.key}`;
}
