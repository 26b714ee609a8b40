import { ClaimsError } from "../errors.ts";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";

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

/** Raised when a YAML file does not parse or does not satisfy its schema; every issue names file, row and field. */
export class SourceFileError extends ClaimsError<"INVALID_SOURCE_FILE"> {
  constructor(readonly file: string, readonly issues: SourceIssue[]) {
    super("INVALID_SOURCE_FILE", `${file} is invalid:\n${issues.map(formatIssue).join("\n")}`);
  }
}

/** Formats one issue as `file:line row 'X' field: message`. */
export function formatIssue(issue: SourceIssue): string {
  const where = `${issue.file}${issue.line ? `:${issue.line}` : ""}`;
  const row = issue.row ? ` row '${issue.row}'` : "";
  return `  ${where}${row} ${issue.field || "(top level)"}: ${issue.message}`;
}

/** A parsed YAML document that can locate a path in the source text. */
export interface YamlSource {
  file: string;
  value: unknown;
  lineOf(path: readonly PropertyKey[]): number | undefined;
}

/** Parses YAML text; syntax errors become a `SourceFileError` with line numbers. */
export function parseYamlSource(text: string, file: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SourceFileError(
      file,
      doc.errors.map((e) => ({ file, line: e.linePos?.[0]?.line, field: "", message: e.message.split("\n")[0] ?? e.message })),
    );
  }
  return {
    file,
    value: doc.toJS({ maxAliasCount: 50 }),
    lineOf(path) {
      for (let depth = path.length; depth >= 0; depth--) {
        const node = doc.getIn(path.slice(0, depth) as unknown[], true) as { range?: [number, number, number] } | undefined;
        if (node && typeof node === "object" && node.range) return lineCounter.linePos(node.range[0]).line;
      }
      return undefined;
    },
  };
}

/** Formats a zod path as `a.b[2].c`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i === 0 ? "" : "."}${String(p)}`)).join("");
}

/** Validates a parsed YAML document against a schema; every zod issue becomes a located `SourceIssue`. */
export function validateYaml<S extends z.ZodType>(
  source: YamlSource,
  schema: S,
  rowOf: (path: readonly PropertyKey[]) => string | undefined = () => undefined,
): z.infer<S> {
  const result = schema.safeParse(source.value);
  if (result.success) return result.data;
  throw new SourceFileError(
    source.file,
    result.error.issues.map((issue) => ({
      file: source.file,
      line: source.lineOf(issue.path),
      row: rowOf(issue.path),
      field: formatPath(issue.path),
      message: issue.message,
    })),
  );
}
