// Writes functions/openapi.json from functions/http/openapi.ts (`npm run openapi`); functions/openapi.test.ts fails while they differ.
import { readFileSync, writeFileSync } from "node:fs";
import { openApiDocument } from "../functions/http/openapi.ts";

const root = new URL("..", import.meta.url);
const version = (JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string }).version;
const out = new URL("functions/openapi.json", root);
writeFileSync(out, `${JSON.stringify(openApiDocument(version), null, 2)}\n`);
process.stdout.write(`wrote ${out.pathname}\n`);
