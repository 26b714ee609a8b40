// The return events route (docs/returns.md): a shop or warehouse reports a return's progress with the intake token.
// One pipeline call (postReturnEvent); its outcome mapped to a status code. Nothing is stored for a refused request.
import { postReturnEvent } from "../../pipeline/returns.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { CLAIM_ID } from "./intake-routes.ts";
import { MAX_BODY_BYTES, apiError, bodyBytes, json, parseJsonBody } from "./http.ts";
import type { ApiRequest, ApiResponse } from "./http.ts";

/**
 * `POST /claims/{id}/return-events`: 200 `{ claim_id, status, decision }` (the same event again: the same claim,
 * `RECORDED`); 400 invalid (the issue names the field); 404 unknown claim; 409 `NOT_AWAITING_RETURN` or
 * `EVENT_ID_REUSED`; 413 body over the limit.
 */
export async function postReturnEvents(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const id = request.pathParameters?.id ?? "";
  if (!CLAIM_ID.test(id)) return apiError(400, "INVALID_CLAIM_ID", "claim ids hold 1-128 letters, digits, _ and -");
  const bytes = bodyBytes(request);
  if (bytes.length > MAX_BODY_BYTES)
    return apiError(413, "PAYLOAD_TOO_LARGE", `the body is ${bytes.length} bytes; the limit is ${MAX_BODY_BYTES}`);
  const body = parseJsonBody(bytes);
  if (!body.ok) return apiError(400, "INVALID_JSON", "the body is not a JSON object", body.issues);
  const result = await postReturnEvent(id, body.value, deps);
  if (result.ok) return json(200, { claim_id: result.claimId, status: result.status, decision: result.decision });
  if (result.code === "INVALID_INPUT") return apiError(400, result.code, result.message, result.issues);
  if (result.code === "NOT_FOUND") return apiError(404, result.code, result.message);
  return apiError(409, result.code, result.message);
}
