// One formatter for what is wrong with a request body (INVALID_INPUT's `issues`, docs/http-api.md): each zod issue
// as `{ path, message }`, zod's own English ("Invalid input: expected string, received undefined") reworded for a
// person ("required: a string"); a schema's own message (a refine's, a field's) is kept as written.
import type * as z from "zod";

/** One problem with a request body, for the 400 body. */
export interface InputIssue {
  path: string;
  message: string;
}

/** zod's default messages (en locale): a schema's own message matches none of them and is kept. */
const ZOD_DEFAULT = /^(Invalid input|Invalid option|Too small|Too big|Unrecognized keys?|Invalid [a-z0-9 _-]+$)/i;

const A: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "null",
  undefined: "nothing",
  bigint: "a whole number",
  date: "a date",
  nan: "NaN",
};
const a = (type: string | undefined) => (type ? (A[type] ?? `a ${type}`) : "a value");
const plural = (n: number | bigint, one: string) => `${String(n)} ${one}${Number(n) === 1 ? "" : "s"}`;

type Issue = z.core.$ZodIssue;

/** A person's wording of one zod issue (its path apart). */
export function issueMessage(issue: Issue): string {
  if (!ZOD_DEFAULT.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "invalid_type": {
      const received = /received (\w+)$/.exec(issue.message)?.[1];
      return received === "undefined"
        ? `required: ${a(issue.expected)}`
        : `expected ${a(issue.expected)}, got ${a(received)}`;
    }
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? issue.minimum : issue.maximum;
      const most = issue.code === "too_small" ? "at least" : "at most";
      const strict = issue.code === "too_small" ? "more than" : "less than";
      if (issue.origin === "string") return `must have ${most} ${plural(bound, "character")}`;
      if (issue.origin === "array" || issue.origin === "set") return `must have ${most} ${plural(bound, "item")}`;
      return `must be ${issue.inclusive === false ? strict : most} ${String(bound)}`;
    }
    case "invalid_format":
      return `must be a valid ${issue.format === "email" ? "email address" : issue.format}`;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length === 1 ? "" : "s"} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}: leave ${issue.keys.length === 1 ? "it" : "them"} out`;
    case "invalid_union": {
      const types = issue.errors.map((alt) =>
        alt.length === 1 && alt[0]?.code === "invalid_type" ? alt[0].expected : undefined,
      );
      return types.every((t) => t !== undefined)
        ? `must be ${types.map(a).join(" or ")}`
        : "matches none of the accepted forms";
    }
    default:
      return issue.message;
  }
}

/** Turns zod issues into `{ path, message }` pairs (path dotted, `(body)` for the whole body), worded for a person. */
export function toInputIssues(error: z.ZodError): InputIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(body)", message: issueMessage(i) }));
}
