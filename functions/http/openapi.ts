// The OpenAPI 3.1 description of the HTTP API (docs/http-api.md), generated from app/manifest.ts ROUTES and the zod
// schemas the handlers parse with (z.toJSONSchema, JSON Schema 2020-12 as OpenAPI 3.1 uses). Every route of
// ROUTES must have its entry in ROUTE_DOCS (openapi-route-docs.ts, over the bodies of openapi-schemas.ts):
// `openApiDocument()` refuses a route without one, so a new route cannot ship undescribed
// (functions/openapi.test.ts). The document is checked in as functions/openapi.json (`npm run openapi` writes it;
// a test fails when it drifts) and GET /openapi.json serves that file.
import * as z from "zod";
import { ClaimSchema, ClaimSubmissionSchema } from "../../core/claim/claim.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "../../core/claim/proposal-output.ts";
import { ROUTES } from "../../app/manifest.ts";
import type { RouteAuth, RouteKey } from "../../app/manifest.ts";
import { SubmissionSchema } from "../../pipeline/decide/intake.ts";
import { OpenApiError } from "./errors.ts";
import {
  ApiErrorSchema,
  ClaimViewSchema,
  ReviewListItemSchema,
  ReviewRequestSchema,
  ReviewResultSchema,
  ReviewViewSchema,
} from "./openapi-schemas.ts";
import { ROUTE_DOCS } from "./openapi-route-docs.ts";
import type { ResponseDoc, RouteDoc } from "./openapi-route-docs.ts";
/** JSON Schema 2020-12 of a small zod schema (parameters), inlined where it is used. */
function inlineSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** Schemas shared by several operations, under their component names (requests: what a client sends; responses: what it gets). */
const SHARED = {
  input: [
    [ClaimSchema, "Claim"],
    [ClaimSubmissionSchema, "SubmittedClaim"],
    [SubmissionSchema, "ClaimSubmission"],
    [ReviewRequestSchema, "ReviewDecision"],
  ],
  output: [
    [ApiErrorSchema, "Error"],
    [ClaimViewSchema, "ClaimView"],
    [ReviewViewSchema, "ReviewView"],
    [ReviewListItemSchema, "ReviewListItem"],
    [ReviewResultSchema, "ReviewResult"],
    [RefundProposalOutputSchema, "RefundProposal"],
    [ClaimExtractionOutputSchema, "ClaimExtraction"],
  ],
} as const satisfies Record<"input" | "output", readonly (readonly [z.ZodType, string])[]>;

/**
 * The components of one document: every request and response body is a named component (z.toJSONSchema over
 * a registry, with $refs between them), in two registries because a request is described as a client sends
 * it (defaults optional) and a response as the handler writes it.
 */
function componentRegistries() {
  const registries = { input: z.registry<{ id: string }>(), output: z.registry<{ id: string }>() };
  for (const io of ["input", "output"] as const)
    for (const [schema, id] of SHARED[io]) registries[io].add(schema, { id });
  return {
    /** A $ref to `schema` as a component (registered under `id` unless it is a shared one). */
    ref(schema: z.ZodType, io: "input" | "output", id: string) {
      const registry = registries[io];
      if (!registry.has(schema)) registry.add(schema, { id });
      return { $ref: `#/components/schemas/${registry.get(schema)!.id}` };
    },
    schemas(): Record<string, unknown> {
      const all: Record<string, unknown> = {};
      for (const io of ["input", "output"] as const) {
        const { schemas } = z.toJSONSchema(registries[io], {
          io,
          unrepresentable: "any",
          uri: (id) => `#/components/schemas/${id}`,
        });
        for (const [id, schema] of Object.entries(schemas)) {
          const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
          all[id] = rest;
        }
      }
      return Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
    },
  };
}

/** `POST /claims/{id}/review` → `postClaimsIdReview`. */
function operationIdOf(key: RouteKey): string {
  const [method, path] = key.split(" ") as [string, string];
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

const SECURITY: Record<Exclude<RouteAuth, "none">, string> = { intake: "intakeToken", reviewer: "reviewerToken" };

/** The OpenAPI 3.1 document of every route of ROUTES; throws OpenApiError for a route ROUTE_DOCS does not describe. */
export function openApiDocument(
  version: string,
  docs: Partial<Record<RouteKey, RouteDoc>> = ROUTE_DOCS,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const components = componentRegistries();
  for (const [key, route] of Object.entries(ROUTES) as [RouteKey, (typeof ROUTES)[RouteKey]][]) {
    const doc = docs[key];
    if (!doc)
      throw new OpenApiError(
        `route ${key} (app/manifest.ts ROUTES) has no description: add it to ROUTE_DOCS in functions/http/openapi-route-docs.ts`,
      );
    const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const parameters: unknown[] = names.map((name) => {
      const param = doc.pathParams?.[name];
      if (!param) throw new OpenApiError(`route ${key}: path parameter {${name}} has no description in ROUTE_DOCS`);
      return { name, in: "path", required: true, description: param.description, schema: inlineSchema(param.schema) };
    });
    for (const [name, q] of Object.entries(doc.query ?? {}))
      parameters.push({
        name,
        in: "query",
        required: false,
        description: q.description,
        schema: inlineSchema(q.schema),
      });
    for (const [name, h] of Object.entries(doc.headers ?? {}))
      parameters.push({
        name,
        in: "header",
        required: false,
        description: h.description,
        schema: inlineSchema(h.schema),
      });
    const operationId = operationIdOf(key);
    const common: Record<number, ResponseDoc> = {
      500: {
        description: "An internal error; the body carries the request id and no internals.",
        schema: ApiErrorSchema,
      },
    };
    if (doc.body || parameters.length > 0)
      common[400] = {
        description: "Invalid input: nothing was stored; `issues` names each field.",
        schema: ApiErrorSchema,
      };
    if (route.auth !== "none") {
      common[401] =
        "tokenPage" in route
          ? { description: "No Authorization header, and Accept does not prefer text/html." }
          : { description: "No Authorization header (API Gateway answers before any function runs)." };
      common[403] = { description: `The bearer token is not the ${route.auth} token.` };
    }
    const componentId = operationId.charAt(0).toUpperCase() + operationId.slice(1);
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries({ ...doc.responses, ...common } as Record<string, ResponseDoc>).sort(
      ([a], [b]) => Number(a) - Number(b),
    )) {
      const content = r.schema
        ? {
            content: {
              [r.contentType ?? "application/json"]: {
                schema:
                  r.contentType === "text/html"
                    ? { type: "string" }
                    : components.ref(r.schema, "output", `${componentId}${status}`),
              },
            },
          }
        : {};
      const headers = r.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(r.headers).map(([n, h]) => [
                n,
                { description: h.description, schema: inlineSchema(h.schema) },
              ]),
            ),
          }
        : {};
      responses[status] = { description: r.description, ...headers, ...content };
    }
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = {
      operationId,
      tags: [doc.tag],
      summary: doc.summary,
      description: doc.description,
      security: route.auth === "none" ? [] : [{ [SECURITY[route.auth]]: [] }],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(doc.body
        ? {
            requestBody: {
              required: true,
              description: doc.body.description,
              content: {
                "application/json": { schema: components.ref(doc.body.schema, "input", `${componentId}Request`) },
              },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Claims Crew HTTP API",
      version,
      description:
        "Refund claims decided by an LLM crew and a deterministic kernel (docs/http-api.md). The same paths locally (`claims serve`) and on AWS (the `api` output of `sst deploy`).",
    },
    tags: [
      { name: "claims", description: "Submit and read claims (intake token)." },
      { name: "reviews", description: "Human review (reviewer token)." },
      { name: "operations", description: "Open routes." },
    ],
    components: {
      schemas: components.schemas(),
      securitySchemes: {
        intakeToken: {
          type: "http",
          scheme: "bearer",
          description: "CLAIMS_API_TOKEN locally; the ApiToken secret on AWS.",
        },
        reviewerToken: {
          type: "http",
          scheme: "bearer",
          description:
            "Locally a reviewer's token (CLAIMS_REVIEWER_TOKEN or the reviewers file) or an OIDC JWT; on AWS a JWT of the reviewers' issuer.",
        },
      },
    },
    paths,
  };
}
