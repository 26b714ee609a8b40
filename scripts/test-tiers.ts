// Which test files `npm run test:quick` runs (vitest.config.ts, project `quick`): units and contracts that need
// no browser, no local stack, no emulator, no SST or bundler and no child process — told from each file's own
// imports and calls (and those of the test support it imports: *.test-kit.ts, testing/), so a new test lands in the
// right tier without a list to keep. Everything else is project `slow`; `npm test` runs both.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/** What puts a test file out of the quick tier: its name, a module it imports, or a call it makes. */
export const SLOW_MARKS: readonly { why: string; name?: RegExp; imports?: RegExp; calls?: RegExp }[] = [
  { why: "an end-to-end test (its name)", name: /\.e2e\.test\.ts$/ },
  { why: "a browser", imports: /playwright|browser/, calls: /chromium/ },
  {
    why: "the local stack",
    imports: /local\/(stack|runtime|stack-runtime|handler-thread|http-front)\.ts$|stack-fixture/,
  },
  {
    why: "an emulator",
    imports:
      /emulators\.ts$|dynalite|fauxqs|testing\/moto|contract-dynamo|account-standin|eventbridge\/server\.ts$|sqs-emulator/,
  },
  { why: "a child process", imports: /serve-child|node:child_process/ },
  { why: "SST or a bundler", imports: /sst-recorder|esbuild|build-cli/ },
  // The quick tier runs without isolation (vitest.config.ts): its files share each worker's modules and process.
  {
    why: "it changes the process's environment or module registry",
    calls:
      /process\.env(?:\.\w+|\[[^\]]+\])\s*=(?!=)|delete process\.env|process\.chdir\(|vi\.(?:mock|doMock|stubGlobal)\(/,
  },
];

const SPECIFIER = /(?:from\s+|import\s*\(\s*)"([^"]+)"/g;

/** The modules `text` imports (static and literal dynamic imports), as written. */
export function importsOf(text: string): string[] {
  return [...text.matchAll(SPECIFIER)].map((m) => m[1]!);
}

/** Why the test file `path` (its text read by `read`) is not a quick test; undefined when it is one. */
export function slowBecause(
  path: string,
  read: (file: string) => string | undefined = readIfThere,
): string | undefined {
  const byName = SLOW_MARKS.find((m) => m.name?.test(path));
  if (byName) return byName.why;
  // The file and the test support it reaches: what they import and call.
  const seen = new Set<string>();
  const queue = [normalize(path)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = read(file);
    if (text === undefined) continue;
    const specifiers = importsOf(text);
    const hit = SLOW_MARKS.find((m) => m.calls?.test(text) || specifiers.some((s) => m.imports?.test(s)));
    if (hit) return `${hit.why}${file === normalize(path) ? "" : ` (through ${file})`}`;
    for (const s of specifiers)
      if (s.startsWith(".") && /\.test-kit\.ts$|\/testing\//.test(s)) queue.push(normalize(join(dirname(file), s)));
  }
  return undefined;
}

function readIfThere(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/** Every *.test.ts under the working directory (relative paths), outside node_modules, dist and dot-folders. */
export function testFiles(dir = "."): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = dir === "." ? e.name : join(dir, e.name);
    if (e.isDirectory())
      return e.name === "node_modules" || e.name === "dist" || e.name.startsWith(".") ? [] : testFiles(path);
    return e.name.endsWith(".test.ts") ? [path] : [];
  });
}
