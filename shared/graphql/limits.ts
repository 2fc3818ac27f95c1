/**
 * Query cost limits, measured on the document before anything runs (fragments expanded;
 * introspection fields `__*` are not counted). Depth is checked right after parsing, before
 * validation (an abusive document is refused without further work); complexity after validation:
 * - depth: the longest chain of nested selections (`{tasks{edges{node{assignee{name}}}}}` is 5);
 *   at most MAX_DEPTH;
 * - complexity: every field costs 1; the selection under a list-returning root field (a
 *   connection) counts once per record it may return, i.e. times its `limit` argument (default
 *   20, capped at 100 like LIST); the selection under an aggregate counts AGGREGATE_GROUPS times
 *   (its groups are not paged, and each aggregate may read up to AGGREGATE_SCAN_LIMIT records, so
 *   a query holds a few at most); at most MAX_COMPLEXITY. Aliases repeat fields, so they add up.
 * A query over either limit is refused with HTTP 400 and a GraphQL error whose extensions.code is
 * QUERY_TOO_DEEP or QUERY_TOO_COMPLEX (with the measured value and the limit).
 */
import {
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  type DocumentNode,
} from 'graphql';

export const MAX_DEPTH = 8;
export const MAX_COMPLEXITY = 2500;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
/** What the selection under an aggregate root field weighs: as a connection's at its largest page. */
export const AGGREGATE_GROUPS = MAX_LIMIT;

export interface Cost {
  depth: number;
  complexity: number;
}

function valueOf(node: ValueNode | undefined, variables: Record<string, unknown>): unknown {
  if (!node) return undefined;
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  return undefined;
}

function limitOf(field: FieldNode, variables: Record<string, unknown>): number | undefined {
  const arg = field.arguments?.find((a) => a.name.value === 'limit');
  const hasPage = field.arguments?.some((a) => a.name.value === 'page' || a.name.value === 'filter');
  if (!arg && !hasPage) return undefined;
  const value = valueOf(arg?.value, variables);
  const n = typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : DEFAULT_LIMIT;
  return Math.min(n, MAX_LIMIT);
}

/** The operation to run: the named one, else the only one. */
export function operationOf(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) return operations.find((o) => o.name?.value === operationName);
  return operations.length === 1 ? operations[0] : undefined;
}

export function measure(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  connections: ReadonlySet<string>,
  aggregates: ReadonlySet<string> = new Set(),
): Cost {
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  // Fragments being expanded (a cycle, which validation refuses later, stops here).
  const expanding = new Set<string>();
  const walk = (set: SelectionSetNode | undefined, level: number, root: boolean): Cost => {
    if (!set) return { depth: level, complexity: 0 };
    let depth = level;
    let complexity = 0;
    for (const selection of set.selections) {
      let inner: Cost;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        const below = walk(selection.selectionSet, level + 1, false);
        const name = selection.name.value;
        const times = !root ? 1 : connections.has(name) ? (limitOf(selection, variables) ?? DEFAULT_LIMIT) : aggregates.has(name) ? AGGREGATE_GROUPS : 1;
        inner = { depth: selection.selectionSet ? below.depth : level + 1, complexity: 1 + below.complexity * times };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        inner = walk(selection.selectionSet, level, root);
      } else {
        const name = selection.name.value;
        if (expanding.has(name)) continue;
        expanding.add(name);
        inner = walk(fragments.get(name)?.selectionSet, level, root);
        expanding.delete(name);
      }
      depth = Math.max(depth, inner.depth);
      complexity += inner.complexity;
    }
    return { depth, complexity };
  };
  return walk(operation.selectionSet, 0, true);
}
