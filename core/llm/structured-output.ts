// Reading a model's structured answer: JSON out of the text (whole, fenced block, first balanced
// object), then validation against the request's zod schema. Shared by every network model.
import type { ZodType } from "zod";

/** Where in the text the JSON was found. */
type JsonSource = "whole" | "fenced" | "embedded";

/** JSON found in a model's text, or why none was. */
type JsonFromText = { ok: true; value: unknown; source: JsonSource } | { ok: false; message: string };

/** Finds JSON in a model's text: the whole text, else a fenced ```json block, else the first balanced `{…}` that parses. */
export function parseJsonFromText(text: string): JsonFromText {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, message: "the answer is empty" };
  const whole = tryParse(trimmed);
  if (whole.ok) return { ok: true, value: whole.value, source: "whole" };
  for (const block of fencedBlocks(trimmed)) {
    const parsed = tryParse(block);
    if (parsed.ok) return { ok: true, value: parsed.value, source: "fenced" };
  }
  for (const candidate of balancedObjects(trimmed)) {
    const parsed = tryParse(candidate);
    if (parsed.ok) return { ok: true, value: parsed.value, source: "embedded" };
  }
  return {
    ok: false,
    message: `no JSON object found in the answer (starts with ${JSON.stringify(trimmed.slice(0, 60))})`,
  };
}

/** A validated structured answer, or the failure code and a message naming the offending fields. */
type StructuredOutput<T> =
  | { ok: true; value: T; source: JsonSource }
  | { ok: false; code: "LLM_INVALID_JSON" | "LLM_SCHEMA_VIOLATION" | "LLM_EMPTY_RESPONSE"; message: string };

/** Parses and validates a model's answer against a schema. */
export function readStructuredOutput<T>(text: string, schema: { name: string; zod: ZodType<T> }): StructuredOutput<T> {
  if (text.trim() === "")
    return { ok: false, code: "LLM_EMPTY_RESPONSE", message: `the model returned no content for '${schema.name}'` };
  const json = parseJsonFromText(text);
  if (!json.ok)
    return { ok: false, code: "LLM_INVALID_JSON", message: `answer for '${schema.name}' is not JSON: ${json.message}` };
  const parsed = schema.zod.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 8)
      .map((i) => `${i.path.length > 0 ? i.path.join(".") : "(root)"}: ${i.message}`)
      .join("; ");
    return { ok: false, code: "LLM_SCHEMA_VIOLATION", message: `answer does not match '${schema.name}': ${issues}` };
  }
  return { ok: true, value: parsed.data, source: json.source };
}

function tryParse(s: string): { ok: true; value: unknown } | { ok: false } {
  const t = s.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) as unknown };
  } catch {
    return { ok: false };
  }
}

function fencedBlocks(text: string): string[] {
  const labelled: string[] = [];
  const other: string[] = [];
  for (const m of text.matchAll(/```([a-zA-Z0-9_-]*)[ \t]*\r?\n?([\s\S]*?)```/g)) {
    const lang = (m[1] ?? "").toLowerCase();
    const body = m[2] ?? "";
    (lang === "json" ? labelled : other).push(body);
  }
  return [...labelled, ...other];
}

/** Every balanced `{…}` span in order of its opening brace, skipping braces inside JSON strings. */
function balancedObjects(text: string): string[] {
  const out: string[] = [];
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    const end = matchingBrace(text, start);
    if (end !== -1) out.push(text.slice(start, end + 1));
    if (out.length >= 16) break;
  }
  return out;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
