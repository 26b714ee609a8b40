// A pure EventBridge event-pattern matcher: validate a pattern once, then match events against it.
//
// Semantics follow the EventBridge documentation and aws/event-ruler (`rulesForJSONEvent`):
// fields are ANDed, the values in a field's array are ORed, an array in the event matches when
// any element matches, objects inside event arrays are matched element by element (array
// consistency), `exists` looks at leaf values only, and `anything-but` needs the field present.
// Operators the local bus does not implement (e.g. `cidr`) are rejected, never silently ignored.
import { InvalidEventPatternError, PatternSyntaxError } from "./errors.ts";

/** An EventBridge event pattern as plain JSON (the shape of app/bus.ts `RULE_PATTERNS`). */
export type EventPattern = Readonly<Record<string, unknown>>;

/** The result of validating a pattern. */
type PatternValidation = { readonly ok: true } | { readonly ok: false; readonly message: string };

type Leaf = string | number | boolean | null;
type LeafTest = (value: Leaf) => boolean;
type LeafMatcher =
  | { readonly kind: "test"; readonly test: LeafTest }
  | { readonly kind: "exists"; readonly exists: boolean };
type FieldNode =
  | { readonly kind: "object"; readonly node: ObjectNode }
  | { readonly kind: "leaf"; readonly matchers: readonly LeafMatcher[] };
type ObjectNode = {
  readonly fields: ReadonlyArray<{ readonly key: string; readonly node: FieldNode }>;
  readonly ors: ReadonlyArray<readonly ObjectNode[]>;
};

/** Operators the local matcher implements. */
const SUPPORTED_OPERATORS = [
  "prefix",
  "suffix",
  "equals-ignore-case",
  "wildcard",
  "anything-but",
  "numeric",
  "exists",
] as const;

const KNOWN_UNSUPPORTED = new Set(["cidr"]);
const compiled = new WeakMap<object, ObjectNode>();

/** Checks a pattern without matching anything; the message names the offending operator and path. */
export function validatePattern(pattern: unknown): PatternValidation {
  try {
    compileRoot(pattern);
    return { ok: true };
  } catch (error) {
    if (error instanceof PatternSyntaxError) return { ok: false, message: error.message };
    throw error;
  }
}

/**
 * True when `event` (a full EventBridge envelope, or any JSON object) matches `pattern`.
 * Throws InvalidEventPatternError for a pattern that `validatePattern` rejects.
 */
export function matchesPattern(pattern: EventPattern, event: unknown): boolean {
  let node = compiled.get(pattern);
  if (!node) {
    try {
      node = compileRoot(pattern);
    } catch (error) {
      if (error instanceof PatternSyntaxError) throw new InvalidEventPatternError(error.message);
      throw error;
    }
    compiled.set(pattern, node);
  }
  return matchObjectValue(node, event);
}

// ---------------------------------------------------------------------------------------------
// Compilation (validation)

function fail(path: string, message: string): never {
  throw new PatternSyntaxError(`Invalid event pattern at ${path || "<root>"}: ${message}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function compileRoot(pattern: unknown): ObjectNode {
  if (!isPlainObject(pattern)) fail("", "a pattern must be a JSON object");
  return compileObject(pattern, "");
}

function compileObject(obj: Record<string, unknown>, path: string): ObjectNode {
  const keys = Object.keys(obj);
  if (keys.length === 0) fail(path, "an object in a pattern must not be empty");
  const fields: Array<{ key: string; node: FieldNode }> = [];
  const ors: ObjectNode[][] = [];
  for (const key of keys) {
    const value = obj[key];
    const here = join(path, key);
    if (key === "$or") {
      if (!Array.isArray(value) || value.length < 2) fail(here, '"$or" needs an array of at least two pattern objects');
      ors.push(
        value.map((alt: unknown, i) => {
          if (!isPlainObject(alt)) fail(`${here}[${i}]`, 'each "$or" alternative must be a pattern object');
          return compileObject(alt, `${here}[${i}]`);
        }),
      );
    } else if (Array.isArray(value)) {
      if (value.length === 0) fail(here, "a match array must not be empty");
      fields.push({
        key,
        node: { kind: "leaf", matchers: value.map((m: unknown, i) => compileMatcher(m, `${here}[${i}]`)) },
      });
    } else if (isPlainObject(value)) {
      fields.push({ key, node: { kind: "object", node: compileObject(value, here) } });
    } else {
      fail(here, `match values must be in an array or a nested object, got ${JSON.stringify(value)}`);
    }
  }
  return { fields, ors };
}

function compileMatcher(m: unknown, path: string): LeafMatcher {
  if (m === null || typeof m === "string" || typeof m === "boolean") {
    return { kind: "test", test: (v) => v === m };
  }
  if (typeof m === "number") {
    if (!Number.isFinite(m)) fail(path, "numbers must be finite");
    return { kind: "test", test: (v) => v === m };
  }
  if (Array.isArray(m)) fail(path, "nested arrays are not allowed in a match array");
  if (!isPlainObject(m)) fail(path, `unsupported match value ${String(m)}`);
  const keys = Object.keys(m);
  if (keys.length !== 1)
    fail(
      path,
      `an operator object must have exactly one key, got ${keys.length ? keys.map((k) => `"${k}"`).join(", ") : "none"}`,
    );
  const op = keys[0] as string;
  const arg = m[op];
  const here = `${path}.${op}`;
  switch (op) {
    case "prefix":
      return { kind: "test", test: stringAffixTest(arg, here, "prefix") };
    case "suffix":
      return { kind: "test", test: stringAffixTest(arg, here, "suffix") };
    case "equals-ignore-case": {
      const s = requireString(arg, here);
      return { kind: "test", test: (v) => typeof v === "string" && foldEquals(v, s) };
    }
    case "wildcard": {
      const re = wildcardRegExp(requireString(arg, here), here);
      return { kind: "test", test: (v) => typeof v === "string" && re.test(v) };
    }
    case "numeric":
      return { kind: "test", test: numericTest(arg, here) };
    case "exists":
      if (typeof arg !== "boolean") fail(here, '"exists" takes true or false');
      return { kind: "exists", exists: arg };
    case "anything-but": {
      const excluded = anythingButTest(arg, here);
      return { kind: "test", test: (v) => !excluded(v) };
    }
    default:
      if (KNOWN_UNSUPPORTED.has(op)) {
        fail(
          path,
          `operator "${op}" is not supported by the local matcher (supported: ${SUPPORTED_OPERATORS.join(", ")})`,
        );
      }
      fail(path, `unknown operator "${op}" (supported: ${SUPPORTED_OPERATORS.join(", ")})`);
  }
}

function requireString(arg: unknown, path: string): string {
  if (typeof arg !== "string") fail(path, `expected a string, got ${JSON.stringify(arg)}`);
  return arg;
}

function stringAffixTest(arg: unknown, path: string, kind: "prefix" | "suffix"): LeafTest {
  const has = kind === "prefix" ? (v: string, s: string) => v.startsWith(s) : (v: string, s: string) => v.endsWith(s);
  if (typeof arg === "string") return (v) => typeof v === "string" && has(v, arg);
  if (isPlainObject(arg)) {
    const keys = Object.keys(arg);
    if (keys.length === 1 && keys[0] === "equals-ignore-case") {
      const s = requireString(arg["equals-ignore-case"], `${path}.equals-ignore-case`).toLowerCase();
      return (v) => typeof v === "string" && has(v.toLowerCase(), s);
    }
    fail(path, `"${kind}" takes a string or { "equals-ignore-case": string }`);
  }
  fail(path, `"${kind}" takes a string or { "equals-ignore-case": string }, got ${JSON.stringify(arg)}`);
}

function foldEquals(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase() || a.toUpperCase() === b.toUpperCase();
}

function wildcardRegExp(pattern: string, path: string): RegExp {
  let source = "";
  let previousWasStar = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next !== "*" && next !== "\\") fail(path, 'in a wildcard, a backslash may only escape "*" or "\\"');
      source += escapeRegExp(next);
      i++;
      previousWasStar = false;
    } else if (c === "*") {
      if (previousWasStar) fail(path, "consecutive wildcard characters are not allowed");
      source += "[\\s\\S]*";
      previousWasStar = true;
    } else {
      source += escapeRegExp(c);
      previousWasStar = false;
    }
  }
  return new RegExp(`^${source}$`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

const LOWER_OPS = new Set([">", ">="]);
const UPPER_OPS = new Set(["<", "<="]);

function numericTest(arg: unknown, path: string): LeafTest {
  if (!Array.isArray(arg) || (arg.length !== 2 && arg.length !== 4)) {
    fail(path, '"numeric" takes [op, number] or [op, number, op, number]');
  }
  const pairs: Array<[string, number]> = [];
  for (let i = 0; i < arg.length; i += 2) {
    const op: unknown = arg[i];
    const n: unknown = arg[i + 1];
    if (typeof op !== "string" || !(op === "=" || LOWER_OPS.has(op) || UPPER_OPS.has(op))) {
      fail(path, `unknown numeric operator ${JSON.stringify(op)} (use =, <, <=, >, >=)`);
    }
    if (typeof n !== "number" || !Number.isFinite(n)) fail(path, `numeric operator "${op}" needs a finite number`);
    pairs.push([op, n]);
  }
  if (pairs.length === 2) {
    const ops = pairs.map(([op]) => op);
    if (ops.includes("=")) fail(path, '"=" cannot be combined with another numeric operator');
    const lower = pairs.find(([op]) => LOWER_OPS.has(op));
    const upper = pairs.find(([op]) => UPPER_OPS.has(op));
    if (!lower || !upper) fail(path, "a numeric range needs one lower bound (>, >=) and one upper bound (<, <=)");
    if (lower[1] >= upper[1]) fail(path, "the lower bound of a numeric range must be below the upper bound");
  }
  return (v) => typeof v === "number" && pairs.every(([op, n]) => compare(op, v, n));
}

function compare(op: string, v: number, n: number): boolean {
  switch (op) {
    case "=":
      return v === n;
    case ">":
      return v > n;
    case ">=":
      return v >= n;
    case "<":
      return v < n;
    default:
      return v <= n;
  }
}

/** Returns the test for the *excluded* values; the matcher negates it. */
function anythingButTest(arg: unknown, path: string): LeafTest {
  if (typeof arg === "string" || typeof arg === "number") {
    if (typeof arg === "number" && !Number.isFinite(arg)) fail(path, "numbers must be finite");
    return (v) => v === arg;
  }
  if (Array.isArray(arg)) {
    if (arg.length === 0) fail(path, '"anything-but" needs a non-empty list');
    const allStrings = arg.every((x) => typeof x === "string");
    const allNumbers = arg.every((x) => typeof x === "number" && Number.isFinite(x));
    if (!allStrings && !allNumbers) fail(path, 'an "anything-but" list must hold only strings or only numbers');
    const set = new Set<unknown>(arg);
    return (v) => set.has(v);
  }
  if (isPlainObject(arg)) {
    const keys = Object.keys(arg);
    if (keys.length !== 1)
      fail(path, '"anything-but" takes one nested operator: prefix, suffix, equals-ignore-case or wildcard');
    const op = keys[0] as string;
    const inner = arg[op];
    const here = `${path}.${op}`;
    switch (op) {
      case "prefix": {
        const s = requireString(inner, here);
        return (v) => typeof v === "string" && v.startsWith(s);
      }
      case "suffix": {
        const s = requireString(inner, here);
        return (v) => typeof v === "string" && v.endsWith(s);
      }
      case "equals-ignore-case": {
        const list = stringOrStrings(inner, here);
        return (v) => typeof v === "string" && list.some((s) => foldEquals(v, s));
      }
      case "wildcard": {
        const res = stringOrStrings(inner, here).map((s) => wildcardRegExp(s, here));
        return (v) => typeof v === "string" && res.some((re) => re.test(v));
      }
      default:
        fail(
          here,
          `operator "${op}" is not allowed inside "anything-but" (use prefix, suffix, equals-ignore-case or wildcard)`,
        );
    }
  }
  fail(path, `"anything-but" takes a string, a number, a list, or a nested operator, got ${JSON.stringify(arg)}`);
}

function stringOrStrings(arg: unknown, path: string): string[] {
  if (typeof arg === "string") return [arg];
  if (Array.isArray(arg) && arg.length > 0 && arg.every((x) => typeof x === "string")) return arg as string[];
  fail(path, "expected a string or a non-empty list of strings");
}

// ---------------------------------------------------------------------------------------------
// Matching

function matchObjectValue(node: ObjectNode, value: unknown): boolean {
  const candidates: Array<Record<string, unknown> | undefined> = [];
  collectObjects(value, candidates);
  if (candidates.length === 0) candidates.push(undefined);
  return candidates.some((obj) => matchFields(node, obj));
}

function collectObjects(value: unknown, out: Array<Record<string, unknown> | undefined>): void {
  if (Array.isArray(value)) {
    for (const element of value) collectObjects(element, out);
  } else if (isPlainObject(value)) {
    out.push(value);
  }
}

function matchFields(node: ObjectNode, obj: Record<string, unknown> | undefined): boolean {
  for (const { key, node: field } of node.fields) {
    const child = obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined;
    const ok = field.kind === "object" ? matchObjectValue(field.node, child) : matchLeaf(field.matchers, child);
    if (!ok) return false;
  }
  return node.ors.every((alternatives) => alternatives.some((alt) => matchFields(alt, obj)));
}

function matchLeaf(matchers: readonly LeafMatcher[], value: unknown): boolean {
  const values: Leaf[] = [];
  collectLeaves(value, values);
  return matchers.some((m) => (m.kind === "exists" ? values.length > 0 === m.exists : values.some(m.test)));
}

function collectLeaves(value: unknown, out: Leaf[]): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    for (const element of value) collectLeaves(element, out);
  } else if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    out.push(value);
  }
}
