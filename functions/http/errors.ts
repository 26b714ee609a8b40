// Errors of the HTTP shell's own definitions.
import { ClaimsError } from "../../core/errors.ts";

/** A route of ROUTES has no entry in ROUTE_DOCS (or a path parameter without a description). */
export class OpenApiError extends ClaimsError<"OPENAPI_UNDESCRIBED"> {
  constructor(message: string) {
    super("OPENAPI_UNDESCRIBED", message);
  }
}
