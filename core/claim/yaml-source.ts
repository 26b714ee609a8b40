// YAML configuration and scenario files: parse with line positions, validate with zod, and turn every
// problem into an issue a person can fix (the key's own line, "did you mean", the real cause).
import { SourceFileError } from "./errors.ts";
import { LineCounter, isMap, isScalar, isSeq, parseDocument } from "yaml";
import type { Document, Node, Pair } from "yaml";
import * as z from "zod";

/** One problem found in a configuration or scenario file, located for a person to fix. */
export interface SourceIssue {
  file: string;
  line?: number;
  /** Row id (e.g. the scenario id) when the problem is inside a list of rows. */
  row?: string;
  /** Dotted path of the field, e.g. `scenarios[3].context.claim.amount_eur`. */
  field: string;
  message: string;
}

/** A parsed YAML document that can locate a path in the source text. */
interface YamlSource {
  file: string;
  value: unknown;
  /** The line of the deepest existing part of `path`: a key's own line for a mapping entry, the item's line for a list entry. */
  lineOf(path: readonly PropertyKey[]): number | undefined;
  /**
   * When the unknown key `key` of the mapping at `path` is the tail of a decimal comma inside `{ … }` (YAML reads
   * `amount: 80,00` there as `amount: 80` and a key `00`), the key holding the number and the text as written.
   */
  decimalCommaAt(path: readonly PropertyKey[], key: string): { key: string; written: string } | undefined;
}

/** Parses YAML text; syntax errors become a `SourceFileError` with line numbers. */
export function parseYamlSource(text: string, file: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SourceFileError(
      file,
      doc.errors.map((e) => ({
        file,
        line: e.linePos?.[0]?.line,
        field: "",
        message: e.message.split("\n")[0] ?? e.message,
      })),
    );
  }
  const lineAt = (offset: number) => lineCounter.linePos(offset).line;
  return {
    file,
    value: doc.toJS({ maxAliasCount: 50 }),
    lineOf(path) {
      let node: unknown = doc.contents;
      let line = rangeOf(node) ? lineAt(rangeOf(node)![0]) : undefined;
      for (const segment of path) {
        if (isMap(node)) {
          const pair = pairOf(node.items, segment);
          if (!pair) break;
          const at = rangeOf(pair.key) ?? rangeOf(pair.value);
          if (at) line = lineAt(at[0]);
          node = pair.value;
        } else if (isSeq(node) && typeof segment === "number") {
          const item = node.items[segment];
          const at = rangeOf(item);
          if (!at) break;
          line = lineAt(at[0]);
          node = item;
        } else break;
      }
      return line;
    },
    decimalCommaAt(path, key) {
      const map = nodeAt(doc, path);
      if (!isMap(map) || !map.flow) return undefined;
      const index = map.items.findIndex((p) => keyText(p.key) === key);
      const pair = map.items[index];
      const before = map.items[index - 1];
      if (!pair || !before || pair.value !== null || !isScalar(pair.key) || !isScalar(before.value)) return undefined;
      const digits = sourceText(text, pair.key);
      const number = sourceText(text, before.value);
      if (!/^\d+$/.test(digits) || !/^-?\d+$/.test(number)) return undefined;
      return { key: keyText(before.key) ?? "", written: `${number},${digits}` };
    },
  };
}

function rangeOf(node: unknown): [number, number, number] | undefined {
  return node && typeof node === "object" && "range" in node
    ? ((node as { range?: [number, number, number] }).range ?? undefined)
    : undefined;
}

function keyText(key: unknown): string | undefined {
  return isScalar(key) ? String(key.value) : typeof key === "string" ? key : undefined;
}

function pairOf(items: Pair<unknown, unknown>[], segment: PropertyKey): Pair<unknown, unknown> | undefined {
  return items.find((p) => keyText(p.key) === String(segment));
}

function nodeAt(doc: Document, path: readonly PropertyKey[]): unknown {
  let node: unknown = doc.contents;
  for (const segment of path) {
    if (isMap(node)) node = pairOf(node.items, segment)?.value;
    else if (isSeq(node) && typeof segment === "number") node = node.items[segment];
    else return undefined;
  }
  return node;
}

function sourceText(text: string, node: Node): string {
  const r = rangeOf(node);
  return r ? text.slice(r[0], r[1]).trim() : "";
}

/** Formats a zod path as `a.b[2].c`. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i === 0 ? "" : "."}${String(p)}`)).join("");
}

/** The closest of `candidates` to `word` (a typo, a missing underscore, a prefix), or undefined when none is close. */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    const distance = c === w ? 0 : editDistance(w, c);
    const limit = Math.max(1, Math.floor(Math.max(w.length, c.length) / 4));
    const related =
      w.length >= 4 && (c.startsWith(w) || w.startsWith(c) || c.replace(/[_-]/g, "") === w.replace(/[_-]/g, ""));
    if ((distance <= limit || related) && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Edit distance with adjacent transpositions (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
};
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schemas that can describe the value at `path` (wrappers unwrapped, both sides of a pipe, every union member). */
function schemasAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType[] {
  const def = defOf(schema);
  if (def.innerType) return schemasAt(def.innerType, path);
  if (def.type === "pipe") return [...schemasAt(def.in!, path), ...schemasAt(def.out!, path)];
  if (def.type === "union") return def.options!.flatMap((o) => schemasAt(o, path));
  if (path.length === 0) return [schema];
  const [head, ...rest] = path;
  if (def.type === "object" && typeof head === "string" && def.shape?.[head]) return schemasAt(def.shape[head], rest);
  if (def.type === "array" && typeof head === "number") return schemasAt(def.element!, rest);
  if (def.type === "record") return schemasAt(def.valueType!, rest);
  return [];
}

/** The keys a schema allows in the mapping at `path` (for "did you mean"). */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  return [
    ...new Set(
      schemasAt(schema, path).flatMap((s) => (defOf(s).type === "object" ? Object.keys(defOf(s).shape ?? {}) : [])),
    ),
  ];
}

/** Metadata marking a field that is accepted and ignored (it only means something to another runtime). */
interface IgnoredFieldMeta {
  ignored: string;
}

/** A field accepted and not used (it only means something to another runtime); `why` says so to the user. */
export function ignoredField(why: string, schema: z.ZodType = z.unknown()): z.ZodType {
  return schema.optional().meta({ ignored: why } satisfies IgnoredFieldMeta);
}

/** A field of a file that was accepted and not used, with why. */
export interface IgnoredField {
  /** Path with list indices written `[]`, e.g. `agents[].crew`. */
  path: string;
  why: string;
}

/** The fields of `value` that `schema` marks as ignored (`.meta({ ignored })`), each path listed once. */
export function ignoredFields(schema: z.ZodType, value: unknown): IgnoredField[] {
  const found = new Map<string, string>();
  const visit = (s: z.ZodType, v: unknown, at: PropertyKey[]) => {
    const def = defOf(s);
    if (def.innerType) return visit(def.innerType, v, at);
    if (def.type === "pipe") return visit(def.in!, v, at);
    if (def.type === "object" && v && typeof v === "object" && !Array.isArray(v)) {
      for (const [key, fieldValue] of Object.entries(v)) {
        const field = def.shape?.[key];
        const why = (field?.meta() as Partial<IgnoredFieldMeta> | undefined)?.ignored;
        if (why) found.set(formatPath([...at, key]).replace(/\.\[\]/g, "[]"), why);
        else if (field) visit(field, fieldValue, [...at, key]);
      }
    } else if (def.type === "array" && Array.isArray(v)) {
      v.forEach((item) => visit(def.element!, item, [...at, "[]"]));
    } else if (def.type === "record" && v && typeof v === "object") {
      for (const [key, item] of Object.entries(v)) visit(def.valueType!, item, [...at, key]);
    }
  };
  visit(schema, value, []);
  return [...found].map(([path, why]) => ({ path, why }));
}

function valueAt(value: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let v: unknown = value;
  for (const segment of path) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, segment)) return { found: false, value: undefined };
    v = (v as Record<PropertyKey, unknown>)[segment];
  }
  return { found: true, value: v };
}

/** A clear message for a number written as text: a decimal comma, thousands separators, quotes. */
export function numberFormatMessage(written: string): string | undefined {
  const t = written.trim();
  if (/^-?\d+,\d{1,2}$/.test(t))
    return `${JSON.stringify(t)} is not a number: write amounts with a decimal point, e.g. ${t.replace(",", ".")}`;
  if (/^-?\d{1,3}([,. ]\d{3})+([.,]\d{1,2})?$/.test(t))
    return `${JSON.stringify(t)} is not a number: write it without thousands separators and with a decimal point, e.g. 1200.00`;
  if (/^-?\d+(\.\d+)?$/.test(t)) return `${JSON.stringify(t)} is quoted text: write the number without quotes`;
  return undefined;
}

const WANTED: Record<string, string> = {
  array: "a list",
  object: "a mapping of keys",
  number: "a number",
  string: "a text",
  boolean: "true or false",
};

/** A located issue with its path, and the field a misspelt key meant. */
type ExplainedIssue = SourceIssue & { path: readonly PropertyKey[]; meant?: string };

/** Turns one zod issue into the located issues a person can act on. */
function explain(
  source: YamlSource,
  schema: z.ZodType,
  issue: z.core.$ZodIssue,
  rowOf: (path: readonly PropertyKey[]) => string | undefined,
): ExplainedIssue[] {
  const at = (path: readonly PropertyKey[], message: string, meant?: string): ExplainedIssue => ({
    path,
    ...(meant ? { meant } : {}),
    file: source.file,
    line: source.lineOf(path),
    row: rowOf(path),
    field: formatPath(path),
    message,
  });
  if (issue.code === "unrecognized_keys") {
    const known = knownKeysAt(schema, issue.path);
    return issue.keys.map((key) => {
      const comma = source.decimalCommaAt(issue.path, key);
      if (comma) {
        return at(
          [...issue.path, comma.key],
          `${comma.written} is not a number in YAML (inside { … } a comma separates entries, so it reads as ${comma.written.replace(/,.*/, "")} and a key ${comma.written.replace(/.*,/, "")}): write amounts with a decimal point, e.g. ${comma.written.replace(",", ".")}`,
        );
      }
      const suggestion = closestMatch(key, known);
      const allowed = known.length > 0 && known.length <= 12 ? ` (allowed here: ${known.join(", ")})` : "";
      return at(
        [...issue.path, key],
        `unknown key ${JSON.stringify(key)}${suggestion ? ` — did you mean ${JSON.stringify(suggestion)}?` : allowed}`,
        suggestion ? formatPath([...issue.path, suggestion]) : undefined,
      );
    });
  }
  if (issue.code === "invalid_type") {
    const { found, value } = valueAt(source.value, issue.path);
    const name = String(issue.path.at(-1) ?? "value");
    const wanted = WANTED[issue.expected] ?? `a ${issue.expected}`;
    if (!found || value === undefined) return [at(issue.path, `${name} is missing (required: ${wanted})`)];
    if (value === null) return [at(issue.path, `${name} is empty (required: ${wanted})`)];
    if (issue.expected === "number" && typeof value === "string") {
      const hint = numberFormatMessage(value);
      if (hint) return [at(issue.path, hint)];
    }
  }
  return [at(issue.path, issue.message)];
}

/** Validates a parsed YAML document against a schema; every zod issue becomes a located `SourceIssue`, ordered by line. */
export function validateYaml<S extends z.ZodType>(
  source: YamlSource,
  schema: S,
  rowOf: (path: readonly PropertyKey[]) => string | undefined = () => undefined,
): z.infer<S> {
  const result = schema.safeParse(source.value);
  if (result.success) return result.data;
  const explained = result.error.issues.flatMap((issue) => explain(source, schema, issue, rowOf));
  // A misspelt key also leaves the key it meant missing: say it once, at the misspelling.
  const meant = new Set(explained.flatMap((i) => (i.meant ? [i.meant] : [])));
  const issues = explained
    .filter((i) => !(meant.has(i.field) && !valueAt(source.value, i.path).found))
    .map(({ meant: _m, path: _p, ...issue }) => issue);
  throw new SourceFileError(
    source.file,
    issues
      .map((issue, i) => ({ issue, i }))
      .sort((a, b) => (a.issue.line ?? 0) - (b.issue.line ?? 0) || a.i - b.i)
      .map(({ issue }) => issue),
  );
}
