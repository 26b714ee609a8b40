// Lists the exports of production files that no other file imports (tests and benches count as importers
// only of what production also runs: an export imported only by tests is reported as "tests only").
// Run: node --import tsx scripts/unused-exports.ts [--json]. Exit 0 always: it is a report, not a gate.
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { dirname, resolve, relative } from "node:path";
import ts from "typescript";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const files = execFileSync("git", ["ls-files", "*.ts"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => f && !f.endsWith(".d.ts") && !f.startsWith("scripts/"));
const isTest = (f: string) => /\.test\.ts$|test-kit|^bench\//.test(f);

interface FileInfo {
  exports: Set<string>;
  starFrom: string[];
  reexports: Map<string, { from: string; name: string }>;
  imports: { from: string; names: string[] | "*" }[];
}

function resolveSpec(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  return relative(root, resolve(root, dirname(from), spec));
}

const info = new Map<string, FileInfo>();
for (const f of files) {
  const src = ts.createSourceFile(f, readFileSync(resolve(root, f), "utf8"), ts.ScriptTarget.Latest, true);
  const fi: FileInfo = { exports: new Set(), starFrom: [], reexports: new Map(), imports: [] };
  for (const st of src.statements) {
    const mods = ts.canHaveModifiers(st) ? ts.getModifiers(st) : undefined;
    const exported = mods?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const from = resolveSpec(f, st.moduleSpecifier.text);
      if (!from) continue;
      const clause = st.importClause;
      if (!clause) fi.imports.push({ from, names: [] });
      else if (clause.namedBindings && ts.isNamespaceImport(clause.namedBindings))
        fi.imports.push({ from, names: "*" });
      else {
        const names =
          clause.namedBindings && ts.isNamedImports(clause.namedBindings)
            ? clause.namedBindings.elements.map((e) => (e.propertyName ?? e.name).text)
            : [];
        if (clause.name) names.push("default");
        fi.imports.push({ from, names });
      }
    } else if (ts.isExportDeclaration(st)) {
      const from =
        st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)
          ? resolveSpec(f, st.moduleSpecifier.text)
          : undefined;
      if (!st.exportClause) {
        if (from) fi.starFrom.push(from);
      } else if (ts.isNamedExports(st.exportClause)) {
        for (const e of st.exportClause.elements) {
          fi.exports.add(e.name.text);
          if (from) fi.reexports.set(e.name.text, { from, name: (e.propertyName ?? e.name).text });
        }
      }
    } else if (exported) {
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) {
          if (ts.isIdentifier(d.name)) fi.exports.add(d.name.text);
          else if (ts.isObjectBindingPattern(d.name))
            for (const el of d.name.elements) if (ts.isIdentifier(el.name)) fi.exports.add(el.name.text);
        }
      } else if (
        (ts.isFunctionDeclaration(st) ||
          ts.isClassDeclaration(st) ||
          ts.isInterfaceDeclaration(st) ||
          ts.isTypeAliasDeclaration(st) ||
          ts.isEnumDeclaration(st)) &&
        st.name
      ) {
        fi.exports.add(mods?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ? "default" : st.name.text);
      }
    }
  }
  info.set(f, fi);
}

// Marks `name` of `file` used, following re-exports and star exports of barrels.
const used = new Map<string, Set<string>>(); // file -> names used by production
const usedByTests = new Map<string, Set<string>>();
function mark(target: Map<string, Set<string>>, file: string, name: string | "*", seen = new Set<string>()): void {
  const key = `${file}#${name}`;
  if (seen.has(key)) return;
  seen.add(key);
  const fi = info.get(file);
  if (!fi) return;
  const set = target.get(file) ?? new Set<string>();
  target.set(file, set);
  if (name === "*") {
    for (const n of fi.exports) mark(target, file, n, seen);
    for (const s of fi.starFrom) mark(target, s, "*", seen);
    return;
  }
  set.add(name);
  const re = fi.reexports.get(name);
  if (re) mark(target, re.from, re.name, seen);
  if (!fi.exports.has(name)) for (const s of fi.starFrom) mark(target, s, name, seen);
}

// Deployed entry points and commands count as users of their handler exports.
const entryNames: Record<string, string[]> = {};
for (const f of files) if (/^functions\/[^/]+\.ts$/.test(f) && !isTest(f)) entryNames[f] = ["handler"];
entryNames["sst.config.ts"] = ["default"];
entryNames["cli/main.ts"] = ["main"];
for (const [f, names] of Object.entries(entryNames)) for (const n of names) mark(used, f, n);

for (const [f, fi] of info) {
  const target = isTest(f) ? usedByTests : used;
  for (const imp of fi.imports) {
    if (imp.names === "*") mark(target, imp.from, "*");
    else for (const n of imp.names) mark(target, imp.from, n);
  }
}

const unused: string[] = [];
const testsOnly: string[] = [];
let total = 0;
for (const [f, fi] of info) {
  if (isTest(f)) continue;
  for (const name of fi.exports) {
    if (fi.reexports.has(name)) continue;
    total++;
    if (used.get(f)?.has(name)) continue;
    if (usedByTests.get(f)?.has(name)) testsOnly.push(`${f}: ${name}`);
    else unused.push(`${f}: ${name}`);
  }
}

if (process.argv.includes("--json")) {
  process.stdout.write(JSON.stringify({ total, unused, testsOnly }, null, 2) + "\n");
} else {
  for (const u of unused) process.stdout.write(`unused      ${u}\n`);
  for (const u of testsOnly) process.stdout.write(`tests only  ${u}\n`);
  process.stdout.write(
    `${total} production exports: ${unused.length} imported by no file, ${testsOnly.length} imported only by tests\n`,
  );
}
