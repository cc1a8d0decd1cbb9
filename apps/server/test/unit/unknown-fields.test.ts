/** The unknown-field walker over the zod shapes the API uses. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { closestKnown, findUnknownFields, unknownFieldMessage } from "../../src/http/input/unknown-fields.ts";

const keys = (schema: z.ZodType, value: unknown) => findUnknownFields(schema, value).map((f) => [...f.path, f.key].join("."));

describe("findUnknownFields", () => {
  it("objects, nested objects, arrays of objects, wrappers and refinements", () => {
    const Entry = z.object({ devId: z.string(), mtu: z.number().optional() });
    const Body = z
      .object({
        name: z.string().optional(),
        interfaces: z.array(Entry).optional(),
        bgp: z.object({ asn: z.number() }).nullable().default(null),
      })
      .superRefine(() => {});
    expect(keys(Body, { name: "a" })).toEqual([]);
    expect(
      keys(Body, { nmae: "a", interfaces: [{ devId: "x" }, { devId: "y", mtuu: 1 }], bgp: { asn: 1, as: 2 } }).sort(),
    ).toEqual(["bgp.as", "interfaces.1.mtuu", "nmae"].sort());
  });

  it("own keys only: constructor, toString and __proto__ are unknown", () => {
    const value = JSON.parse('{"constructor": 1, "toString": 2, "__proto__": 3}');
    expect(keys(z.object({ a: z.string().optional() }), value).sort()).toEqual(["__proto__", "constructor", "toString"]);
  });

  it("open objects and records accept any key; record values are walked", () => {
    expect(keys(z.looseObject({ a: z.string() }), { a: "x", b: 1 })).toEqual([]);
    expect(keys(z.object({ a: z.string() }).catchall(z.number()), { b: 1 })).toEqual([]);
    expect(keys(z.record(z.string(), z.object({ on: z.boolean() })), { x: { on: true }, y: { off: true } })).toEqual(["y.off"]);
  });

  it("unions: fine when one applicable option knows every key, else the closest option's unknowns", () => {
    const U = z.union([
      z.string(),
      z.object({ kind: z.literal("a"), a: z.number() }),
      z.object({ kind: z.literal("b"), b: z.number() }),
    ]);
    expect(keys(U, { kind: "b", b: 1 })).toEqual([]);
    expect(keys(U, { kind: "a", a: 1, extra: 1 })).toEqual(["extra"]);
    // The string option does not apply to an object value.
    expect(keys(z.union([z.string(), z.object({ a: z.number() })]), { a: 1, b: 2 })).toEqual(["b"]);
  });

  it("intersections know the keys of both sides; pipes walk their input; preprocess is not walked", () => {
    const I = z.intersection(z.object({ a: z.number() }), z.object({ b: z.number() }));
    expect(keys(I, { a: 1, b: 2, c: 3 })).toEqual(["c"]);
    const P = z.object({ a: z.number() }).transform((v) => v.a);
    expect(keys(P, { a: 1, z: 1 })).toEqual(["z"]);
    expect(
      keys(
        z.preprocess((v) => v, z.object({ a: z.number() })),
        { z: 1 },
      ),
    ).toEqual([]);
    const Lazy: z.ZodType = z.lazy(() => z.object({ child: Lazy.optional() }));
    expect(keys(Lazy, { child: { child: { x: 1 } } })).toEqual(["child.child.x"]);
  });
});

describe("closestKnown", () => {
  it("suggests the likely intended field, not a far-off one", () => {
    const known = ["maxLossPercent", "maxLatencyMs", "maxJitterMs", "holdDownSeconds"];
    expect(closestKnown("maxLossPct", known)).toBe("maxLossPercent");
    expect(closestKnown("maxlatencyms", known)).toBe("maxLatencyMs");
    expect(closestKnown("holdDown", known)).toBe("holdDownSeconds");
    expect(closestKnown("colour", known)).toBeNull();
    expect(unknownFieldMessage({ path: [], key: "maxJiterMs", known })).toBe(
      "unknown field maxJiterMs; did you mean maxJitterMs?",
    );
  });
});
