import { isAlias, isCollection, isMap, isPair, isScalar, visit, type Document, type LineCounter } from 'yaml';
import type { ConfigIssue } from './errors';

/**
 * Nodes that alias expansion may produce in one config before it is refused. The shipped config
 * has a few hundred nodes in all; nine levels of nine aliases ("billion laughs") would expand to
 * hundreds of millions.
 */
export const MAX_ALIAS_EXPANSION = 10_000;

const yamlIssue = (message: string, line: number): ConfigIssue => ({ path: '', value: '(YAML)', message, line });

/**
 * YAML parse errors as config issues, each on the line a reader has to fix: an unterminated flow
 * collection (`[`, `{`) or quoted scalar is reported on the line where it opens, not where the
 * parser gave up; anything else (a duplicate key, bad indentation) on the parser's own line.
 */
export function yamlSyntaxIssues(doc: Document, lc: LineCounter): ConfigIssue[] {
  const unterminated: { start: number; end: number; what: string }[] = [];
  visit(doc, {
    Node: (_key, node) => {
      const r = node.range;
      if (!r) return;
      if (isCollection(node) && node.flow) unterminated.push({ start: r[0], end: r[2], what: isMap(node) ? '{' : '[' });
      else if (isScalar(node) && (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE'))
        unterminated.push({ start: r[0], end: r[2], what: node.type === 'QUOTE_DOUBLE' ? '"' : "'" });
    },
  });
  return doc.errors.map((e) => {
    const pos = e.pos[0];
    const sentence = (e.message.split('\n')[0] ?? e.message).replace(/\s*at line \d+, column \d+:?$/, '');
    const open = unterminated.find((u) => u.start < pos && pos <= u.end);
    if (open && e.code !== 'DUPLICATE_KEY') {
      return yamlIssue(`${sentence}: the ${open.what} opened on this line is not closed`, lc.linePos(open.start).line);
    }
    if (e.code === 'DUPLICATE_KEY')
      return yamlIssue(`${sentence}: this key already appears earlier in the same mapping`, lc.linePos(pos).line);
    return yamlIssue(sentence, lc.linePos(pos).line);
  });
}

/**
 * Refuse aliases before they are expanded: an alias naming no earlier anchor, and the alias at
 * which the nodes produced by expansion (counted in document order, nested aliases included)
 * pass MAX_ALIAS_EXPANSION. Returns the issue at that alias's line, or undefined.
 */
export function aliasIssue(doc: Document, lc: LineCounter, limit = MAX_ALIAS_EXPANSION): ConfigIssue | undefined {
  const anchors = new Map<string, unknown>();
  const sizes = new Map<unknown, number>();
  const targets = new Map<unknown, unknown>();
  const sizeOf = (node: unknown, open: Set<unknown>): number => {
    if (isAlias(node)) {
      const t = targets.get(node);
      return t === undefined || open.has(t) ? 1 : sizeOf(t, open);
    }
    const known = sizes.get(node);
    if (known !== undefined) return known;
    let n = 1;
    open.add(node);
    if (isCollection(node)) for (const item of node.items) n += sizeOf(item, open);
    else if (isPair(node)) n += sizeOf(node.key, open) + sizeOf(node.value, open);
    open.delete(node);
    sizes.set(node, n);
    return n;
  };
  let total = 0;
  let found: ConfigIssue | undefined;
  visit(doc, {
    Node: (_key, node) => {
      if (!isAlias(node) && node.anchor) anchors.set(node.anchor, node);
      if (!isAlias(node)) return undefined;
      const line = node.range ? lc.linePos(node.range[0]).line : 1;
      const target = anchors.get(node.source);
      if (target === undefined) {
        found = yamlIssue(`the alias *${node.source} names no anchor &${node.source} defined before it`, line);
        return visit.BREAK;
      }
      const [a, b] = [node.range, (target as { range?: [number, number, number] }).range];
      if (a && b && b[0] <= a[0] && a[0] < b[2]) {
        found = yamlIssue(
          `the alias *${node.source} is inside its own anchor &${node.source} (a value that contains itself)`,
          line,
        );
        return visit.BREAK;
      }
      targets.set(node, target);
      total += sizeOf(target, new Set());
      if (total > limit) {
        found = yamlIssue(
          `aliases expand this config to more than ${limit} values (nested aliases multiply): write the values out instead of aliasing aliases`,
          line,
        );
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}
