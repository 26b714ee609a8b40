import * as z from "zod";
import type { CrewSchemaIssue } from "./errors.ts";

/** A value that survives `JSON.parse(JSON.stringify(value))` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const MAX_DEPTH = 64;

/** Whether `value` is plain JSON: finite numbers, plain objects and arrays, no `undefined`, at most 64 levels deep. */
export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (const item of value) if (!isJsonValue(item, depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!isJsonValue((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Zod schema of a plain JSON value (fast: one recursive check, no copy). */
export const JsonValueSchema = z.custom<JsonValue>((v) => isJsonValue(v), {
  message:
    "must be a plain JSON value (finite numbers, plain objects and arrays, no undefined, at most 64 levels deep)",
});

/** A zod issue path as `roles[1].permissions.escalate_to[0]`. */
export function formatPath(path: readonly PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** Zod issues reduced to `{ path, message, code }` with readable paths. */
export function schemaIssues(error: z.ZodError, prefix = ""): CrewSchemaIssue[] {
  return error.issues.map((i) => ({ path: formatPath(i.path, prefix), message: i.message, code: i.code }));
}
