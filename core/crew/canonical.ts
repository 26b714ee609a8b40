import { CanonicalJsonError } from "./errors.ts";

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped, array holes and
 * `undefined` items written as `null` (as `JSON.stringify` does), non-finite numbers and circular
 * values refused with `CanonicalJsonError`. Two values that mean the same give the same string.
 */
export function canonicalize(value: unknown): string {
  return write(value, []);
}

// Canonical JSON of values the caller promises never to change, by identity (a warm process decides many
// claims against the same contract objects). Weak: a value no longer referenced is forgotten.
const stable = new WeakMap<object, string>();

/**
 * `canonicalize` for a value that is never mutated after this call (contracts, configuration): computed
 * once per object, then remembered by identity. Primitives are canonicalized every time.
 */
export function canonicalizeStable(value: unknown): string {
  if (value === null || typeof value !== "object") return canonicalize(value);
  let text = stable.get(value);
  if (text === undefined) {
    text = canonicalize(value);
    stable.set(value, text);
  }
  return text;
}

// `open` holds the objects and arrays being written (the path from the root): meeting one again is a cycle.
function write(value: unknown, open: object[]): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value))
        throw new CanonicalJsonError(`canonicalize: non-finite number ${value} has no JSON form`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (open.includes(value))
        throw new CanonicalJsonError(
          `canonicalize: the value is circular (an object contains itself at depth ${open.length}); canonical JSON needs a tree`,
        );
      open.push(value);
      let out: string;
      if (Array.isArray(value)) {
        out = "[";
        // an index loop, not map(): map skips holes, which would write `[1,,3]`
        for (let i = 0; i < value.length; i++) {
          const v: unknown = value[i];
          out += (i === 0 ? "" : ",") + (v === undefined ? "null" : write(v, open));
        }
        out += "]";
      } else {
        const obj = value as Record<string, unknown>;
        if (typeof (obj as { toJSON?: unknown }).toJSON === "function")
          out = write((obj as { toJSON(): unknown }).toJSON(), open);
        else {
          const keys = Object.keys(obj).sort();
          out = "{";
          for (const k of keys) {
            const v = obj[k];
            if (v === undefined) continue;
            out += `${out.length === 1 ? "" : ","}${JSON.stringify(k)}:${write(v, open)}`;
          }
          out += "}";
        }
      }
      open.pop();
      return out;
    }
    default:
      throw new CanonicalJsonError(`canonicalize: cannot encode a ${typeof value}`);
  }
}
