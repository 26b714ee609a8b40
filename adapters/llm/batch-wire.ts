// The OpenAI Batch API's wire, each shape defined once with zod: the Batch object (`POST /v1/batches`,
// `GET /v1/batches/{id}`), the uploaded file (`POST /v1/files`), one line of the input JSONL and one of the output or
// error file. What the endpoint gives back is read through these, and anything else is refused with a message naming
// what is wrong (never trusted, never thrown past the adapter).
import { z } from "zod";

/** The batch endpoint every request of ours goes to. */
export const BATCH_ENDPOINT = "/v1/chat/completions";

/** Where a batch stands; `completed` has its output (and perhaps error) file, the last four never will. */
export const BatchStatusSchema = z.enum([
  "validating",
  "failed",
  "in_progress",
  "finalizing",
  "completed",
  "expired",
  "cancelling",
  "cancelled",
]);
export type BatchStatus = z.infer<typeof BatchStatusSchema>;

/** Statuses whose batch will never give the answers it has not given: its claims are ended as in an outage. */
export const ENDED_WITHOUT_ANSWERS: ReadonlySet<BatchStatus> = new Set([
  "failed",
  "expired",
  "cancelling",
  "cancelled",
]);

/** The Batch object, as much of it as the adapter reads. */
export const BatchObjectSchema = z.object({
  id: z.string().min(1),
  object: z.literal("batch").optional(),
  status: BatchStatusSchema,
  output_file_id: z.string().min(1).nullish(),
  error_file_id: z.string().min(1).nullish(),
  errors: z
    .object({ data: z.array(z.object({ code: z.string().nullish(), message: z.string().nullish() })).nullish() })
    .nullish(),
});
export type BatchObject = z.infer<typeof BatchObjectSchema>;

/** An uploaded file. */
export const FileObjectSchema = z.object({ id: z.string().min(1) });

/** One request of the input file. */
export interface BatchInputLine {
  readonly custom_id: string;
  readonly method: "POST";
  readonly url: typeof BATCH_ENDPOINT;
  readonly body: Readonly<Record<string, unknown>>;
}

/** One line of the output file (an answer, whatever its status code) or of the error file (`error` set). */
export const BatchOutputLineSchema = z.object({
  id: z.string().optional(),
  custom_id: z.string().min(1),
  response: z.object({ status_code: z.number().int(), body: z.unknown() }).nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});
export type BatchOutputLine = z.infer<typeof BatchOutputLineSchema>;

/** A chat completion as a batch's answer carries it: the first choice's content and the usage. */
export const BatchChatCompletionSchema = z.object({
  model: z.string().optional(),
  choices: z.array(
    z.object({
      message: z.object({ content: z.string().nullish(), refusal: z.string().nullish() }),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: z
    .object({
      prompt_tokens: z.number().int().min(0),
      completion_tokens: z.number().int().min(0),
      total_tokens: z.number().int().min(0),
    })
    .nullish(),
});

/** A file's lines read, or the first thing wrong with it (line numbers from 1). */
export type ReadLines = { ok: true; lines: BatchOutputLine[] } | { ok: false; message: string };

/** Reads an output or error file: one JSON object per non-blank line, each with a `custom_id`. */
export function readBatchLines(text: string, file: string): ReadLines {
  const lines: BatchOutputLine[] = [];
  const raw = text.split("\n");
  for (let i = 0; i < raw.length; i++) {
    const line = raw[i]!.trim();
    if (line === "") continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return { ok: false, message: `file ${file} is not JSONL: line ${i + 1} is not JSON` };
    }
    const parsed = BatchOutputLineSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? "" : ` (${issue.path.join(".")})`;
      return {
        ok: false,
        message: `file ${file}, line ${i + 1}: ${issue?.message ?? "not a batch answer"}${where}`,
      };
    }
    lines.push(parsed.data);
  }
  return { ok: true, lines };
}
