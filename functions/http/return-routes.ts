// The return events route (docs/returns.md): a shop or warehouse reports a return's progress with the intake token.
// One pipeline call (postReturnEvent); its outcome mapped to a status code. Nothing is stored for a refused request.
import { postReturnEvent } from "../../pipeline/returns.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { claimPost } from "./review-routes.ts";
import { apiError, json } from "./http.ts";
import type { ApiRequest, ApiResponse } from "./http.ts";

/**
 * `POST /claims/{id}/return-events`: 200 `{ claim_id, status, decision }` (the same event again: the same claim,
 * `RECORDED`); 400 invalid (the issue names the field); 404 unknown claim; 409 `NOT_AWAITING_RETURN` or
 * `EVENT_ID_REUSED`; 413 body over the limit.
 */
export async function postReturnEvents(request: ApiRequest, deps: PipelineDeps): Promise<ApiResponse> {
  const post = claimPost(request);
  if (!post.ok) return post.response;
  const result = await postReturnEvent(post.id, post.body, deps);
  if (result.ok) return json(200, { claim_id: result.claimId, status: result.status, decision: result.decision });
  if (result.code === "INVALID_INPUT") return apiError(400, result.code, result.message, result.issues);
  if (result.code === "NOT_FOUND") return apiError(404, result.code, result.message);
  return apiError(409, result.code, result.message);
}
