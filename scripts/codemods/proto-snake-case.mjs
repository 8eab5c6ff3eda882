#!/usr/bin/env node
/**
 * Codemod (issue 48): rename every use of a generated proto field from ts-proto's camelCase (`tenantId`) to
 * the wire's own name (`tenant_id`, what `snakeToCamel=false` generates), in the TypeScript of the whole tree.
 *
 * Usage (from the repository root, after `pnpm install`; re-runnable, a tree already renamed is left as is):
 *     node scripts/codemods/proto-snake-case.mjs [--dry] [--root DIR] [--only PATH_PREFIX ...]
 *   --dry        print what would change, write nothing
 *   --root DIR   the repository to rewrite (default: the one holding this script)
 *   --only P     rewrite only files whose path (relative to the root) starts with P (repeatable)
 *   --skip-rename  only the passes that follow the compiler's errors and jest matchers (steps 6-7)
 * Then: `pnpm exec turbo run typecheck` and the tests; what is left is own types that mirror a message by
 * hand (e.g. `{ tenantId }` port types, `as unknown as XClient` mocks): rename those by hand.
 *
 * How: the script runs `buf generate` twice into a temporary directory, once with camelCase keys (ts-proto's
 * default) and once with `snakeToCamel=false`, pairs each generated interface's properties by position
 * (camel -> snake), and builds one TypeScript language service over every .ts file of the tree in which
 * `packages/proto/src/generated` is the camelCase output (virtually; the real directory is not touched) and
 * every `@agw/<package>` resolves to its sources. For each property whose name changes it asks the language
 * service for its rename locations (what an editor's "rename symbol" does): property accesses, object literal
 * keys, destructurings (shorthands become `tenant_id: tenantId`, so local names stay), `Pick<X, 'k'>` keys.
 * Only what the compiler resolves to a generated message is renamed; an own type's `tenantId` on the same line
 * is not. Code that is already snake_case does not resolve against the camelCase output and is left alone, so
 * the script can run on a tree where part of the code is renamed (e.g. after merging a branch written
 * against the camelCase output).
 *
 * What it cannot see (listed at the end as warnings, to review by hand):
 * - values that become JSON (`JSON.stringify`, `res.json`, `canonicalize`, `publish`) while typed as a
 *   generated message: their JSON keys change from camelCase to snake_case;
 * - untyped object literals (e.g. a jest `toEqual({ tenantId })`), plain .js/.mjs files: not reported; the
 *   tests and `grep` find them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const dry = args.includes('--dry');
const argValues = (flag) => args.flatMap((a, i) => (a === flag && args[i + 1] ? [args[i + 1]] : []));
const root = resolve(argValues('--root')[0] ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const only = argValues('--only');
const protoDir = join(root, 'packages', 'proto');
const generatedDir = join(protoDir, 'src', 'generated');

const require = createRequire(join(root, 'package.json'));
const ts = require('typescript');

// 1. The camelCase and snake_case outputs of the contracts, side by side.
function generate() {
  const tmp = mkdtempSync(join(tmpdir(), 'proto-snake-case-'));
  const yaml = readFileSync(join(protoDir, 'buf.gen.yaml'), 'utf8');
  const opts = [...yaml.matchAll(/^\s*-\s+([A-Za-z]+=[^\s#]*)\s*$/gm)].map((m) => m[1]).filter((o) => !o.startsWith('snakeToCamel='));
  const bin = join(protoDir, 'node_modules', '.bin');
  for (const [out, snake] of [['camel', 'keys_json'], ['snake', 'false']]) {
    const template = JSON.stringify({ version: 'v2', plugins: [{ local: 'protoc-gen-ts_proto', out, opt: [...opts, `snakeToCamel=${snake}`] }] });
    execFileSync(join(bin, 'buf'), ['generate', '--template', template, '-o', tmp], {
      cwd: protoDir,
      stdio: 'inherit',
      env: { ...process.env, PATH: `${bin}${process.platform === 'win32' ? ';' : ':'}${process.env.PATH}` },
    });
  }
  return tmp;
}

function listFiles(dir, pred, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === '.git' || name === '.tools' || name === '.turbo') continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) {
      if (p === generatedDir) continue;
      listFiles(p, pred, out);
    } else if (pred(p)) out.push(p);
  }
  return out;
}

const tmp = generate();
try {
  const camelFiles = new Map(); // virtual path under src/generated -> camelCase text
  const snakeFiles = new Map(); // the same -> snake_case text
  const snakeOf = new Map(); // camelCase name -> the snake_case names it stands for
  const renames = []; // { file, pos, from, to, iface }
  for (const f of listFiles(join(tmp, 'camel'), (p) => p.endsWith('.ts'))) {
    const rel = relative(join(tmp, 'camel'), f);
    const camelText = readFileSync(f, 'utf8');
    const snakeText = readFileSync(join(tmp, 'snake', rel), 'utf8');
    const virtual = join(generatedDir, rel);
    camelFiles.set(virtual, camelText);
    snakeFiles.set(virtual, snakeText);
    const props = (text) => {
      const sf = ts.createSourceFile(virtual, text, ts.ScriptTarget.Latest, true);
      const out = new Map();
      for (const st of sf.statements) {
        if (!ts.isInterfaceDeclaration(st)) continue;
        out.set(st.name.text, st.members.filter(ts.isPropertySignature).map((m) => ({ name: m.name.getText(sf), pos: m.name.getStart(sf) })));
      }
      return out;
    };
    const camel = props(camelText);
    const snake = props(snakeText);
    for (const [iface, cps] of camel) {
      const sps = snake.get(iface);
      if (!sps || sps.length !== cps.length) throw new Error(`${rel}: interface ${iface} differs between the two outputs`);
      cps.forEach((p, i) => {
        if (p.name === sps[i].name) return;
        renames.push({ file: virtual, pos: p.pos, from: p.name, to: sps[i].name, iface });
        snakeOf.set(p.name, new Set([...(snakeOf.get(p.name) ?? []), sps[i].name]));
      });
    }
  }

  // 2. One language service over the tree, the generated code being the camelCase output.
  const isTs = (p) => /\.(ts|tsx|mts|cts)$/.test(p) && !p.endsWith('.d.ts');
  const files = ['services', 'packages', 'test', 'bench', 'scripts'].flatMap((d) => listFiles(join(root, d), isTs));
  const paths = {};
  for (const group of ['packages', 'services']) {
    for (const name of existsSync(join(root, group)) ? readdirSync(join(root, group)) : []) {
      const pj = join(root, group, name, 'package.json');
      if (!existsSync(pj)) continue;
      const pkg = JSON.parse(readFileSync(pj, 'utf8')).name;
      if (pkg && existsSync(join(root, group, name, 'src', 'index.ts'))) paths[pkg] = [join(root, group, name, 'src', 'index.ts')];
    }
  }
  const base = ts.parseJsonConfigFileContent(JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8')), ts.sys, root).options;
  const options = { ...base, noEmit: true, declaration: false, sourceMap: false, paths, rootDir: root };
  const texts = new Map();
  const versions = new Map();
  let generated = camelFiles;
  const read = (p) => {
    if (generated.has(p)) return generated.get(p);
    if (!texts.has(p)) texts.set(p, ts.sys.readFile(p));
    return texts.get(p);
  };
  const inGenerated = (p) => p === generatedDir || p.startsWith(generatedDir + sep) || p.startsWith(generatedDir + '/');
  const host = {
    getScriptFileNames: () => [...files, ...camelFiles.keys()],
    getScriptVersion: (p) => String(versions.get(p) ?? (generated === camelFiles ? 1 : 2)),
    getScriptSnapshot: (p) => {
      const t = read(p);
      return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
    },
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (p) => generated.has(p) || (!inGenerated(p) && ts.sys.fileExists(p)),
    readFile: (p) => read(p),
    directoryExists: (p) => inGenerated(p) || ts.sys.directoryExists(p),
    getDirectories: ts.sys.getDirectories,
    readDirectory: ts.sys.readDirectory,
    realpath: ts.sys.realpath,
  };
  const ls = ts.createLanguageService(host, ts.createDocumentRegistry());

  // 3. Rename locations of every changed property, outside the generated code.
  const corpus = files.map((f) => read(f) ?? '').join('\n');
  const edits = new Map(); // file -> Map(start -> { length, text, from })
  const conflicts = [];
  const preferences = { providePrefixAndSuffixTextForRename: true };
  const wanted = (f) => !inGenerated(f) && !f.includes(`${sep}node_modules${sep}`) && (only.length === 0 || only.some((o) => relative(root, f).startsWith(o)));
  let asked = 0;
  for (const r of renames) {
    if (!corpus.includes(r.from) || args.includes('--skip-rename')) continue;
    asked++;
    const locs = ls.findRenameLocations(r.file, r.pos, false, false, preferences) ?? [];
    for (const l of locs) {
      if (!wanted(l.fileName)) continue;
      const text = `${l.prefixText ?? ''}${r.to}${l.suffixText ?? ''}`;
      const m = edits.get(l.fileName) ?? new Map();
      edits.set(l.fileName, m);
      const prev = m.get(l.textSpan.start);
      if (prev && prev.text !== text) conflicts.push(`${relative(root, l.fileName)}@${l.textSpan.start}: ${prev.text} vs ${text}`);
      else m.set(l.textSpan.start, { length: l.textSpan.length, text, from: r.from });
    }
  }

  if (args.includes('--skip-rename')) { fixByDiagnostics(); fixMatchers(); process.exit(0); }
  // 4. Values typed as generated messages that become JSON (their keys change): to review by hand.
  const program = ls.getProgram();
  const checker = program.getTypeChecker();
  const generatedType = (type, depth = 0) => {
    if (!type || depth > 2) return false;
    if (type.isUnion() || type.isIntersection()) return type.types.some((t) => generatedType(t, depth + 1));
    const el = checker.isArrayType(type) ? checker.getTypeArguments(type)[0] : undefined;
    if (el) return generatedType(el, depth + 1);
    return type.getProperties().some((p) => (p.declarations ?? []).some((d) => inGenerated(d.getSourceFile().fileName)));
  };
  const warnings = [];
  for (const f of files) {
    if (!wanted(f)) continue;
    const sf = program.getSourceFile(f);
    if (!sf) continue;
    const visit = (node) => {
      if (ts.isCallExpression(node) && node.arguments.length > 0) {
        const callee = node.expression.getText(sf);
        if (/(^|\.)(stringify|json|canonicalize|publish|send)$/.test(callee)) {
          const arg = node.arguments[callee.endsWith('publish') ? node.arguments.length - 1 : 0];
          if (generatedType(checker.getTypeAtLocation(arg))) {
            const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
            warnings.push(`${relative(root, f)}:${line + 1}: ${callee}(${arg.getText(sf).slice(0, 60)}) carries a generated message: its JSON keys change`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  // 5. Apply.
  let count = 0;
  for (const [f, m] of [...edits].sort()) {
    const text = ts.sys.readFile(f);
    const spans = [...m].sort((a, b) => b[0] - a[0]);
    let out = text;
    for (const [start, e] of spans) out = out.slice(0, start) + e.text + out.slice(start + e.length);
    count += spans.length;
    console.log(`${relative(root, f)}: ${spans.length}`);
    if (!dry) writeFileSync(f, out);
  }
  console.log(`${renames.length} generated properties change name, ${asked} are used; ${count} edits in ${edits.size} files${dry ? ' (dry run: nothing written)' : ''}`);
  for (const c of conflicts) console.warn(`conflict: ${c}`);
  for (const w of warnings) console.warn(`warning: ${w}`);
  if (!dry) {
    fixByDiagnostics();
    fixMatchers();
  }

  /**
   * 7. Jest matchers: `expect(x).toEqual({ tenantId })` (also toMatchObject, toStrictEqual, toHaveProperty's
   * key, objectContaining) takes any object, so the compiler says nothing: where `x` is typed as a generated
   * message, the literal's keys (nested ones by the type of their field) are renamed.
   */
  function fixMatchers() {
    const prog = ls.getProgram();
    const chk = prog.getTypeChecker();
    const generatedProp = (type, name) => {
      if (!type) return undefined;
      const types = type.isUnion() ? type.types : [type];
      for (const t of types) {
        const at = chk.getApparentType(chk.getNonNullableType(t));
        const el = chk.isArrayType(at) ? chk.getTypeArguments(at)[0] : undefined;
        if (el) return generatedProp(el, name);
        for (const c of snakeOf.get(name) ?? []) {
          const p = at.getProperty(c);
          if (p && (p.declarations ?? []).some((d) => inGenerated(d.getSourceFile().fileName)) && !at.getProperty(name)) return { to: c, type: chk.getTypeOfSymbol(p) };
        }
      }
      return undefined;
    };
    const elementOf = (type) => {
      if (!type) return type;
      const at = chk.getApparentType(chk.getNonNullableType(type));
      return chk.isArrayType(at) ? chk.getTypeArguments(at)[0] : type;
    };
    let total = 0;
    for (const f of files.filter(wanted)) {
      const sf = prog.getSourceFile(f);
      if (!sf || !/expect\(/.test(sf.text)) continue;
      const m = new Map();
      const walk = (lit, type) => {
        if (ts.isArrayLiteralExpression(lit)) return lit.elements.forEach((e) => walk(e, elementOf(type)));
        if (ts.isCallExpression(lit) && /objectContaining$/.test(lit.expression.getText(sf)) && lit.arguments[0]) return walk(lit.arguments[0], type);
        if (!ts.isObjectLiteralExpression(lit)) return;
        for (const p of lit.properties) {
          if (!(ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) || !ts.isIdentifier(p.name)) continue;
          const hit = generatedProp(type, p.name.text);
          const fieldType = hit ? hit.type : (() => { const at = type && chk.getApparentType(chk.getNonNullableType(elementOf(type))); const q = at?.getProperty(p.name.text); return q ? chk.getTypeOfSymbol(q) : undefined; })();
          if (hit) m.set(p.name.getStart(sf), { length: p.name.getWidth(sf), text: ts.isShorthandPropertyAssignment(p) ? `${hit.to}: ${p.name.text}` : hit.to });
          if (ts.isPropertyAssignment(p)) walk(p.initializer, fieldType);
        }
      };
      const visit = (node) => {
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(toEqual|toMatchObject|toStrictEqual)$/.test(node.expression.name.text) && node.arguments[0]) {
          let e = node.expression.expression;
          while (ts.isPropertyAccessExpression(e)) e = e.expression; // .not, .resolves
          if (ts.isCallExpression(e) && e.expression.getText(sf) === 'expect' && e.arguments[0]) walk(node.arguments[0], chk.getTypeAtLocation(e.arguments[0]));
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
      if (m.size === 0) continue;
      let out = read(f);
      for (const [start, e] of [...m].sort((a, b) => b[0] - a[0])) out = out.slice(0, start) + e.text + out.slice(start + e.length);
      texts.set(f, out);
      writeFileSync(f, out);
      total += m.size;
      console.log(`matchers: ${relative(root, f)}: ${m.size}`);
    }
    console.log(`in jest matchers: ${total} more edits`);
  }

  /**
   * 6. What the rename could not follow (an object literal that is typed only through a generic, e.g.
   * `X.fromPartial({ tenantId })` or the callback of `.map`): against the snake_case output, every property
   * the compiler rejects (an access, an object literal key, a destructuring) whose name is a renamed field's
   * old name, on a type whose generated declaration has the new name, is renamed; rounds until nothing
   * changes.
   */
  function spanNode(sf, start, length) {
    let best;
    const visit = (node) => {
      if (node.getStart(sf) <= start && node.getEnd() >= start + length) {
        if (node.getStart(sf) === start && node.getEnd() === start + length) best = node;
        node.getChildren(sf).forEach(visit);
      }
    };
    visit(sf);
    return best;
  }

  function tokenAt(sf, pos) {
    let node = sf;
    for (;;) {
      const child = node.getChildren(sf).find((c) => c.getStart(sf) <= pos && pos < c.getEnd());
      if (!child) return node;
      node = child;
    }
  }

  function fixByDiagnostics() {
    generated = snakeFiles;
    for (const f of edits.keys()) texts.delete(f);
    let todo = files.filter(wanted);
    let total = 0;
    for (let round = 1; round <= 30 && todo.length > 0; round++) {
      const prog = ls.getProgram();
      const chk = prog.getTypeChecker();
      const changed = new Map(); // file -> Map(start -> { length, text })
      const hasGenerated = (type, name) => {
        if (!type) return false;
        const types = type.isUnion() || type.isIntersection() ? type.types : [type];
        return types.some((t) => {
          const p = chk.getApparentType(chk.getNonNullableType(t)).getProperty(name);
          return !!p && (p.declarations ?? []).some((d) => inGenerated(d.getSourceFile().fileName));
        });
      };
      // absent, or `never` (ts-proto's `Exact<DeepPartial<X>, I>` of fromPartial types an unknown key so)
      const lacks = (type, name) => {
        const p = type && chk.getApparentType(chk.getNonNullableType(type)).getProperty(name);
        return !p || !!(chk.getTypeOfSymbol(p).flags & ts.TypeFlags.Never);
      };
      const target = (sf, id) => {
        const name = id.text;
        const candidates = [...(snakeOf.get(name) ?? [])];
        if (candidates.length === 0) return undefined;
        const p = id.parent;
        let owner; // the type the name is looked up on
        let literal; // an object literal or binding pattern whose other keys are fixed with it
        if (ts.isPropertyAccessExpression(p) && p.name === id) owner = chk.getTypeAtLocation(p.expression);
        else if ((ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && p.name === id && ts.isObjectLiteralExpression(p.parent)) {
          literal = p.parent;
          owner = chk.getContextualType(literal);
        } else if (ts.isBindingElement(p) && (p.propertyName ?? p.name) === id && ts.isObjectBindingPattern(p.parent)) {
          literal = p.parent;
          owner = chk.getTypeAtLocation(literal);
        }
        if (!owner || !lacks(owner, name)) return undefined;
        const to = candidates.find((c) => hasGenerated(owner, c));
        return to ? { to, literal, owner } : undefined;
      };
      const edit = (sf, id, to) => {
        const p = id.parent;
        const text = ts.isShorthandPropertyAssignment(p) || (ts.isBindingElement(p) && !p.propertyName) ? `${to}: ${id.text}` : to;
        const m = changed.get(sf.fileName) ?? new Map();
        changed.set(sf.fileName, m);
        m.set(id.getStart(sf), { length: id.getWidth(sf), text });
      };
      /**
       * An assignment the compiler rejects as a whole (`diff: rows.map((c) => ({ beforeJson }))`, a handler
       * returning `{ records: rows.map(...) }`, an argument built in a local const): the object literals of the
       * expression, followed into `.map` callbacks, returns, conditionals and local consts, get their keys
       * renamed against the expected type.
       */
      const fixShape = (sf, d, edit) => {
        const n = spanNode(sf, d.start, d.length);
        if (!n) return;
        let expr = n;
        let expected;
        const p = n.parent;
        if (ts.isIdentifier(n) && p && (ts.isPropertyAssignment(p) || ts.isVariableDeclaration(p) || ts.isPropertyDeclaration(p)) && p.name === n && p.initializer) {
          expr = p.initializer;
          expected = ts.isPropertyAssignment(p) ? chk.getContextualType(p.initializer) : chk.getTypeAtLocation(p.name);
        } else if (ts.isIdentifier(n) && p && ts.isShorthandPropertyAssignment(p) && ts.isObjectLiteralExpression(p.parent)) {
          const q = parts(chk.getContextualType(p.parent)).map((t) => t.getProperty(n.text)).find(Boolean);
          expected = q && chk.getTypeOfSymbol(q);
        } else expected = chk.getContextualType(n);
        fixExpr(sf, expr, expected, edit, 0);
      };
      const parts = (type) => (type ? (type.isUnion() ? type.types : [type]).map((t) => chk.getApparentType(chk.getNonNullableType(t))) : []);
      const elementOf = (type) => {
        for (const t of parts(type)) if (chk.isArrayType(t) || chk.isTupleType(t)) return chk.getTypeArguments(t)[0];
        return undefined;
      };
      const returnOf = (type, isAsync) => {
        for (const t of parts(type)) {
          const sig = t.getCallSignatures()[0];
          if (sig) {
            const r = chk.getReturnTypeOfSignature(sig);
            return isAsync || true ? (chk.getAwaitedType(r) ?? r) : r;
          }
        }
        return undefined;
      };
      const fixExpr = (sf, e, expected, edit, depth) => {
        if (!e || !expected || depth > 8) return;
        while (ts.isParenthesizedExpression(e) || ts.isAwaitExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e)) e = e.expression;
        if (ts.isObjectLiteralExpression(e)) {
          for (const prop of e.properties) {
            if (!(ts.isPropertyAssignment(prop) || ts.isShorthandPropertyAssignment(prop)) || !ts.isIdentifier(prop.name)) continue;
            const name = prop.name.text;
            let field = name;
            if (lacks(expected, name)) {
              const to = [...(snakeOf.get(name) ?? [])].find((c) => hasGenerated(expected, c));
              if (to) {
                edit(sf, prop.name, to);
                field = to;
              }
            }
            if (ts.isPropertyAssignment(prop)) {
              const q = parts(expected).map((t) => t.getProperty(field)).find(Boolean);
              if (q) fixExpr(sf, prop.initializer, chk.getTypeOfSymbol(q), edit, depth + 1);
            }
          }
        } else if (ts.isArrayLiteralExpression(e)) {
          const el = elementOf(expected);
          for (const x of e.elements) fixExpr(sf, ts.isSpreadElement(x) ? undefined : x, el, edit, depth + 1);
        } else if (ts.isConditionalExpression(e)) {
          fixExpr(sf, e.whenTrue, expected, edit, depth + 1);
          fixExpr(sf, e.whenFalse, expected, edit, depth + 1);
        } else if (ts.isBinaryExpression(e) && [ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(e.operatorToken.kind)) {
          fixExpr(sf, e.right, expected, edit, depth + 1);
        } else if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && /^(map|flatMap)$/.test(e.expression.name.text) && e.arguments[0]) {
          const el = elementOf(expected);
          if (el) fixReturns(sf, e.arguments[0], e.expression.name.text === 'flatMap' ? chk.createArrayType(el) : el, edit, depth + 1);
        } else if (ts.isArrowFunction(e) || ts.isFunctionExpression(e)) {
          fixReturns(sf, e, returnOf(expected), edit, depth + 1);
        } else if (ts.isIdentifier(e)) {
          const sym = chk.getSymbolAtLocation(e);
          const decl = sym?.valueDeclaration;
          if (decl && ts.isVariableDeclaration(decl) && !decl.type && decl.initializer && decl.getSourceFile() === sf) fixExpr(sf, decl.initializer, expected, edit, depth + 1);
        }
      };
      const fixReturns = (sf, fn, type, edit, depth) => {
        if (!type || !(ts.isArrowFunction(fn) || ts.isFunctionExpression(fn))) return;
        if (!ts.isBlock(fn.body)) return fixExpr(sf, fn.body, type, edit, depth);
        const visit = (node) => {
          if (ts.isFunctionLike(node)) return;
          if (ts.isReturnStatement(node) && node.expression) fixExpr(sf, node.expression, type, edit, depth);
          ts.forEachChild(node, visit);
        };
        ts.forEachChild(fn.body, visit);
      };
      let seen = 0;
      for (const f of todo) {
        const sf = prog.getSourceFile(f);
        if (!sf) continue;
        const diags = ls.getSemanticDiagnostics(f);
        seen += diags.length;
        if (process.env.CODEMOD_DEBUG && diags.length) console.log(relative(root, f), diags.slice(0, 3).map((d) => `${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`));
        for (const d of diags) {
          if (d.start === undefined) continue;
          if ([2322, 2345, 2739, 2740, 2741, 2769].includes(d.code)) fixShape(sf, d, edit);
          const node = tokenAt(sf, d.start);
          if (!node || !ts.isIdentifier(node)) continue;
          const t = target(sf, node);
          if (!t) continue;
          edit(sf, node, t.to);
          if (t.literal) {
            for (const el of t.literal.elements ?? t.literal.properties) {
              const id = ts.isBindingElement(el) ? (el.propertyName ?? el.name) : el.name;
              if (!id || !ts.isIdentifier(id) || id === node) continue;
              const to = [...(snakeOf.get(id.text) ?? [])].find((c) => hasGenerated(t.owner, c));
              if (to && lacks(t.owner, id.text)) edit(sf, id, to);
            }
          }
        }
      }
      console.log(`round ${round}: ${todo.length} files, ${seen} errors`);
      if (changed.size === 0) break;
      for (const [f, m] of changed) {
        if (m.size === 0) continue;
        let out = read(f);
        for (const [start, e] of [...m].sort((a, b) => b[0] - a[0])) out = out.slice(0, start) + e.text + out.slice(start + e.length);
        texts.set(f, out);
        versions.set(f, (versions.get(f) ?? 2) + 1);
        writeFileSync(f, out);
        total += m.size;
        console.log(`round ${round}: ${relative(root, f)}: ${m.size}`);
      }
      // the next round: the files changed, and those whose errors may follow from them (every file with errors)
      todo = files.filter((f) => wanted(f) && (changed.has(f) || ls.getSemanticDiagnostics(f).length > 0));
    }
    console.log(`by the compiler's errors: ${total} more edits`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
