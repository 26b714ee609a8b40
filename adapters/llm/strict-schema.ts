// zod 4 → the JSON schema OpenAI's strict structured output accepts: every property required
// (nullable, not optional), `additionalProperties: false` on every object, no `$schema`, and no
// keywords strict mode rejects. zod still validates the answer afterwards with the full schema.
import * as z from "zod";
import type { ZodType } from "zod";
import { LlmSchemaNotStrictError } from "../../core/llm/errors.ts";

type JsonObject = Record<string, unknown>;

/** Keywords dropped because strict mode (or common OpenAI-compatible servers) rejects them; zod re-checks them. */
const DROPPED_KEYWORDS = ["$schema", "minLength", "maxLength", "default", "$comment", "examples"] as const;

const cache = new WeakMap<object, JsonObject>();

/** Converts a zod schema into a strict-mode JSON schema; throws LlmSchemaNotStrictError naming the offending field. */
export function toStrictJsonSchema(name: string, schema: ZodType): JsonObject {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new LlmSchemaNotStrictError(name, "the name must be 1–64 characters of a-z, A-Z, 0-9, _ or -");
  }
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  let json: JsonObject;
  try {
    json = z.toJSONSchema(schema, { target: "draft-7", io: "output", unrepresentable: "throw" }) as JsonObject;
  } catch (cause) {
    throw new LlmSchemaNotStrictError(
      name,
      `zod cannot represent it as JSON schema (${cause instanceof Error ? cause.message : String(cause)})`,
    );
  }
  const strict = visit(name, json, "(root)") as JsonObject;
  if (strict["type"] !== "object") throw new LlmSchemaNotStrictError(name, "the root must be an object");
  cache.set(schema, strict);
  return strict;
}

function visit(name: string, node: unknown, path: string): unknown {
  if (Array.isArray(node)) return node.map((n, i) => visit(name, n, `${path}[${i}]`));
  if (node === null || typeof node !== "object") return node;
  const src = node as JsonObject;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(src)) {
    if ((DROPPED_KEYWORDS as readonly string[]).includes(key)) continue;
    if (key === "properties" && value !== null && typeof value === "object") {
      const props: JsonObject = {};
      for (const [prop, sub] of Object.entries(value as JsonObject))
        props[prop] = visit(name, sub, path === "(root)" ? prop : `${path}.${prop}`);
      out[key] = props;
    } else {
      out[key] = visit(name, value, path);
    }
  }
  const isObject = out["type"] === "object" || out["properties"] !== undefined;
  if (isObject) {
    const props = (out["properties"] ?? {}) as JsonObject;
    const required = new Set(Array.isArray(out["required"]) ? (out["required"] as string[]) : []);
    for (const prop of Object.keys(props)) {
      if (!required.has(prop)) {
        const where = path === "(root)" ? prop : `${path}.${prop}`;
        throw new LlmSchemaNotStrictError(
          name,
          `field '${where}' is optional; strict mode needs every field required — use .nullable() instead of .optional()`,
        );
      }
    }
    if (out["additionalProperties"] !== undefined && out["additionalProperties"] !== false) {
      throw new LlmSchemaNotStrictError(
        name,
        `'${path}' allows arbitrary extra keys (a record); strict mode needs fixed properties`,
      );
    }
    out["additionalProperties"] = false;
    out["required"] = Object.keys(props);
  }
  return out;
}
