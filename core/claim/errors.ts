// Errors of the claims domain: a stable `code`, `cause` kept; business outcomes are returned, never thrown.
import { ClaimsError } from "../errors.ts";
import type { SourceIssue } from "./yaml-source.ts";

/** Raised when a YAML file does not parse or does not satisfy its schema; every issue names file, row and field. */
export class SourceFileError extends ClaimsError<"INVALID_SOURCE_FILE"> {
  constructor(
    readonly file: string,
    readonly issues: SourceIssue[],
  ) {
    super("INVALID_SOURCE_FILE", `${file} is invalid:\n${issues.map(formatIssue).join("\n")}`);
  }
}

/** Formats one issue as `file:line row 'X' field: message`. */
function formatIssue(issue: SourceIssue): string {
  const where = `${issue.file}${issue.line ? `:${issue.line}` : ""}`;
  const row = issue.row ? ` row '${issue.row}'` : "";
  return `  ${where}${row} ${issue.field || "(top level)"}: ${issue.message}`;
}
