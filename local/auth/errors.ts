// Errors of the local credentials: reviewers files. Below local/ (local/ imports local/auth, never the reverse).
import { ClaimsError } from "../../core/errors.ts";

/** A reviewers file that cannot be read or kept owner-only (a configuration error: exit 2). */
export class ReviewersFileError extends ClaimsError {
  readonly exitCode = 2;
  constructor(message: string, cause?: unknown) {
    super("REVIEWERS_FILE", message, { cause });
  }
}
