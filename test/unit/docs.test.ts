import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from '../../src/paths.js';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';

/** Attributes whose values are a closed set the code chooses (the others hold ids and numbers). */
const ENUMERATED = ['IntakeStatus', 'IntakeProcessingStatus'];
const TYPE_WORDS: Record<string, string> = {
  KEYWORD: 'Keyword',
  TEXT: 'Text',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
const markdownIn = (dir: string) =>
  readdirSync(path.join(PROJECT_ROOT, dir))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${dir}/${f}`);
const GUIDES = markdownIn('docs/guides');
/** The numbered decision records (docs/decisions/NNNN-title.md) and their index. */
const DECISIONS = markdownIn('docs/decisions');
const DECISION_RECORDS = DECISIONS.filter((f) => /\/\d{4}-[a-z0-9-]+\.md$/.test(f)).sort();
const DOCS = ['README.md', ...markdownIn('docs'), ...GUIDES, ...DECISIONS];

/** The blank-line separated paragraph of `markdown` that contains `needle` (after `from`, when given). */
function paragraph(markdown: string, needle: string, from = ''): string {
  const rest = markdown.slice(markdown.indexOf(from));
  const found = rest.split(/\n\s*\n/).find((p) => p.includes(needle));
  assert.ok(found, `no paragraph with ${JSON.stringify(needle)}`);
  return found;
}

/** Names every search attribute and nothing else, each followed by its type, e.g. "`IntakeX` (Keyword)" or "(all Keyword)". */
function assertListsSearchAttributes(text: string): void {
  assert.deepEqual([...new Set(text.match(/\bIntake[A-Z]\w*/g))].sort(), ALL_SEARCH_ATTRIBUTES.map((k) => k.name).sort());
  for (const key of ALL_SEARCH_ATTRIBUTES) {
    const type = /\((?:all )?(\w+)\)/.exec(text.slice(text.indexOf(`\`${key.name}\``)))?.[1];
    assert.equal(type, TYPE_WORDS[key.type], `type of ${key.name}`);
  }
}

interface Query {
  file: string;
  attribute: string;
  values: string[];
}

/** Comparisons of an `Intake…` attribute in a visibility query: `IntakeX = "v"`, `IntakeX IN ("a", "b")`, `IntakeX >= 3`. */
function queries(attribute: RegExp): Query[] {
  const pattern = new RegExp(`\\b(${attribute.source})\\s*(?:=|!=|<=|>=|<|>|NOT IN|IN)\\s*("[^"]*"|-?\\d+|\\([^)]*\\))`, 'g');
  return DOCS.flatMap((file) =>
    [...read(file).matchAll(pattern)].map((m) => ({
      file,
      attribute: m[1]!,
      values: m[2]!
        .replace(/^\((.*)\)$/, '$1')
        .split(',')
        .map((v) => v.trim()),
    })),
  );
}

const unquote = (value: string) => /^"(.*)"$/.exec(value)?.[1];

describe('docs match the code', () => {
  it('link only what a clone holds: no path outside the repository, every relative link resolves (issue 29.15)', () => {
    for (const file of DOCS) {
      const text = read(file);
      assert.doesNotMatch(text, /\.\.\/shared\//, `${file} names a file outside the repository`);
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const resolved = path.join(PROJECT_ROOT, path.dirname(file), target!);
        assert.ok(existsSync(resolved), `${file} links ${target}, which is not in the repository`);
      }
    }
  });

  it('decision records: numbered from 0001 without gaps, each with its title and status, listed in the index; supersession marked both ways', () => {
    const index = read('docs/decisions/README.md');
    const records = DECISION_RECORDS.map((file) => {
      const text = read(file);
      const [, num = '', title = ''] = /^# (\d{4})\. (.+)\n/.exec(text) ?? [];
      const header = text.slice(0, text.indexOf('\n\n', text.indexOf('\n\n') + 2));
      const status = /^- Status: (accepted|superseded by \[(\d{4})\]\(\2-[a-z0-9-]+\.md\))$/m.exec(header);
      const supersedes = [...(/^- Supersedes: (.*)$/m.exec(header)?.[1] ?? '').matchAll(/\[(\d{4})\]/g)].map((m) => m[1]!);
      return { file, base: path.basename(file), num, title, status, supersededBy: status?.[2], supersedes };
    });
    records.forEach((r, i) => {
      assert.equal(r.num, String(i + 1).padStart(4, '0'), `${r.file}: numbered in order, no gaps, number in its first line`);
      assert.ok(r.base.startsWith(`${r.num}-`), r.file);
      assert.ok(r.title && r.status, `${r.file}: starts with "# NNNN. Title" and "- Status: accepted | superseded by [NNNN](...)"`);
      assert.ok(index.includes(`| [${r.num}](${r.base}) | ${r.title.replace(/\|/g, '\\|')} |`), `${r.file}: listed in the index`);
    });
    const byNum = new Map(records.map((r) => [r.num, r]));
    for (const r of records) {
      if (r.supersededBy) assert.ok(byNum.get(r.supersededBy)?.supersedes.includes(r.num), `${r.supersededBy} says it supersedes ${r.num}`);
      for (const earlier of r.supersedes)
        assert.equal(byNum.get(earlier)?.supersededBy, r.num, `${earlier} says it is superseded by ${r.num}`);
    }
  });

  it('operations names every search attribute with its type where it sets up Temporal Cloud', () => {
    assertListsSearchAttributes(
      paragraph(read('docs/operations.md'), 'search attributes', '## Running against real PostgreSQL and Temporal'),
    );
  });

  it('decisions name every search attribute with its type', () => {
    assertListsSearchAttributes(paragraph(read('docs/decisions/0018-search-attributes.md'), '**Search attributes.**'));
  });

  it('visibility queries use attributes that exist, with values of their type and values the code sets', () => {
    const code = codeFacts();
    const found = queries(/Intake[A-Z]\w*/);
    assert.ok(
      found.some((q) => q.file === 'docs/operations.md' && q.attribute === 'IntakeProcessingStatus'),
      'the operations page has queries',
    );
    for (const q of found) {
      const where = `${q.file}: ${q.attribute} ${q.values.join(', ')}`;
      const key = ALL_SEARCH_ATTRIBUTES.find((k) => k.name === q.attribute);
      assert.ok(key, `${where}: no such search attribute`);
      const numeric = ['INT', 'DOUBLE'].includes(key.type);
      for (const value of q.values) {
        assert.ok(numeric ? /^-?\d+$/.test(value) : unquote(value) !== undefined, `${where}: not a ${TYPE_WORDS[key.type]} value`);
        if (ENUMERATED.includes(q.attribute))
          assert.ok(code.values.get(q.attribute)?.has(unquote(value)!), `${where}: the code never sets ${value}`);
      }
    }
  });

  it('WorkflowType in visibility queries names a registered workflow', () => {
    const { workflowTypes } = codeFacts();
    for (const q of queries(/WorkflowType/)) {
      for (const value of q.values) assert.ok(workflowTypes.has(unquote(value) ?? value), `${q.file}: no workflow type ${value}`);
    }
  });

  it('no longer say what was true before processing, retention, media, uploads and meeting joins existed', () => {
    const stale: Record<string, string[]> = {
      'docs/decisions': [
        'until issue 5 adds',
        'is null until media ingestion exists',
        'the media issue starts its ingestion',
        "automatic transcription is the meeting-join issue's",
        'balance is 0',
        'belongs to the session-workflow issue',
        'the implementations arrive with meeting joins',
        'of later areas',
        '(issue 5) moves it on',
      ],
      'docs/operations.md': ['with later areas', 'IntakeStatus = "billing_blocked"'],
      'README.md': ['all 32 operations', 'with none left', 'and later upload and playback URLs', 'every response carries'],
    };
    for (const [file, phrases] of Object.entries(stale)) {
      // The README's walk-throughs live in docs/guides/ now: its phrases are looked for there too.
      // The decisions are one record a file: their phrases are looked for in every record.
      const files = file === 'docs/decisions' ? DECISIONS : [file, ...(file === 'README.md' ? GUIDES : [])];
      const text = files.map(read).join('\n').toLowerCase().replace(/\s+/g, ' ');
      assert.deepEqual(
        phrases.filter((p) => text.includes(p.toLowerCase())),
        [],
        file,
      );
    }
  });
});

let facts: { values: Map<string, Set<string>>; workflowTypes: Set<string> } | undefined;

/**
 * What the code can put into the enumerated search attributes, read with the TypeScript checker:
 * every `{ key: K, value: V }` whose K is a `defineSearchAttributeKey('Intake…')` constant, with V
 * resolved to its string literal types (a parameter through the calls of its function, a variable
 * through its assignments); and the workflow types the worker registers (workflows/index.ts).
 */
function codeFacts(): NonNullable<typeof facts> {
  if (facts) return facts;
  const program = sourceProgram();
  const checker = program.getTypeChecker();
  const values = new Map<string, Set<string>>(ENUMERATED.map((name) => [name, new Set<string>()]));
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const prop = (name: string) =>
        node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === name);
      const key = prop('key');
      const value = prop('value');
      const name = key && attributeName(checker, key.initializer);
      if (name && value && values.has(name)) for (const v of literalValues(checker, value.initializer)) values.get(name)!.add(v);
    }
    ts.forEachChild(node, visit);
  };
  for (const file of program.getRootFileNames()) visit(program.getSourceFile(file)!);
  const index = program.getSourceFile(path.join(PROJECT_ROOT, 'workflows', 'index.ts'))!;
  const workflowTypes = new Set(checker.getExportsOfModule(checker.getSymbolAtLocation(index)!).map((s) => s.name));
  facts = { values, workflowTypes };
  return facts;
}

/**
 * The files that set search attributes, and workflows/index.ts. Dependencies other than the
 * Temporal workflow SDK are read as empty modules: their types do not decide these values, and
 * parsing them (the Temporal protobuf types alone are 9 MB) would take most of a minute.
 */
function sourceProgram(): ts.Program {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? walk(path.join(dir, d.name)) : d.name.endsWith('.ts') ? [path.join(dir, d.name)] : [],
    );
  const roots = ['src', 'workflows', 'activities', 'api']
    .flatMap((d) => walk(path.join(PROJECT_ROOT, d)))
    .filter((f) => /\b(upsertSearchAttributes|typedSearchAttributes)\b/.test(readFileSync(f, 'utf8')));
  const config = ts.readConfigFile(path.join(PROJECT_ROOT, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const options = { ...ts.parseJsonConfigFileContent(config.config, ts.sys, PROJECT_ROOT).options, noEmit: true, types: [] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const keep = /node_modules\/(typescript\/lib|@temporalio\/(workflow|common))\//;
  host.getSourceFile = (file, language, ...rest) =>
    file.includes('/node_modules/') && !keep.test(file)
      ? ts.createSourceFile(file, 'export {};', language)
      : getSourceFile(file, language, ...rest);
  return ts.createProgram([...roots, path.join(PROJECT_ROOT, 'workflows', 'index.ts')], options, host);
}

/** `IntakeStatus` for an expression naming `defineSearchAttributeKey('IntakeStatus', …)`, else null. */
function attributeName(checker: ts.TypeChecker, expression: ts.Expression): string | null {
  let symbol = checker.getSymbolAtLocation(expression);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const init =
    symbol?.valueDeclaration && ts.isVariableDeclaration(symbol.valueDeclaration) ? symbol.valueDeclaration.initializer : undefined;
  if (!init || !ts.isCallExpression(init) || init.expression.getText() !== 'defineSearchAttributeKey') return null;
  const first = init.arguments[0];
  return first && ts.isStringLiteral(first) ? first.text : null;
}

function literalValues(checker: ts.TypeChecker, expression: ts.Expression, seen = new Set<ts.Node>()): string[] {
  if (seen.has(expression)) return [];
  seen.add(expression);
  if (ts.isStringLiteralLike(expression)) return expression.text ? [expression.text] : [];
  if (ts.isParenthesizedExpression(expression)) return literalValues(checker, expression.expression, seen);
  if (ts.isConditionalExpression(expression))
    return [expression.whenTrue, expression.whenFalse].flatMap((e) => literalValues(checker, e, seen));
  const type = checker.getTypeAtLocation(expression);
  const parts = type.isUnion() ? type.types : [type];
  if (parts.every((p) => p.isStringLiteral())) return parts.map((p) => p.value);
  const symbol = ts.isIdentifier(expression) ? checker.getSymbolAtLocation(expression) : undefined;
  const declaration = symbol?.valueDeclaration;
  const sources: ts.Expression[] = [];
  const collect = (node: ts.Node): void => {
    if (declaration && ts.isParameter(declaration) && ts.isCallExpression(node) && calls(checker, node, declaration)) {
      const argument = node.arguments[declaration.parent.parameters.indexOf(declaration)];
      if (argument) sources.push(argument);
    }
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      checker.getSymbolAtLocation(node.left) === symbol
    ) {
      sources.push(node.right);
    }
    ts.forEachChild(node, collect);
  };
  if (declaration && ts.isVariableDeclaration(declaration) && declaration.initializer) sources.push(declaration.initializer);
  if (declaration) collect(declaration.getSourceFile());
  assert.ok(sources.length, `cannot tell the values of ${expression.getText()} in ${expression.getSourceFile().fileName}`);
  return sources.flatMap((e) => literalValues(checker, e, seen));
}

/** The call invokes the function (a `const f = (…) => …`) that declares the parameter. */
function calls(checker: ts.TypeChecker, call: ts.CallExpression, parameter: ts.ParameterDeclaration): boolean {
  const holder = parameter.parent.parent;
  return ts.isVariableDeclaration(holder) && checker.getSymbolAtLocation(call.expression) === checker.getSymbolAtLocation(holder.name);
}
