/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped, non-finite
 * numbers refused. Two values that mean the same give the same string.
 */
export function canonicalize(value: unknown): string {
  return write(value);
}

function write(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalize: non-finite number ${value}`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : write(v))).join(",")}]`;
      const obj = value as Record<string, unknown>;
      if (typeof (obj as { toJSON?: unknown }).toJSON === "function") return write((obj as { toJSON(): unknown }).toJSON());
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${write(obj[k])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonicalize: cannot encode a ${typeof value}`);
  }
}
