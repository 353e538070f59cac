// The sources' import graph as data (file -> what it imports, relative
// imports resolved to repo paths, packages by name), and the questions the
// structure tests ask of it: what a file reaches, and which files or
// folders import each other in a circle.
import { importsOf, readSource, resolveImport } from './source-imports.js';

export type ImportGraph = ReadonlyMap<string, readonly string[]>;

export function importGraph(files: readonly string[]): ImportGraph {
  return new Map(
    files.map((file) => [
      file,
      importsOf(readSource(file)).map((specifier) => resolveImport(file, specifier) ?? specifier),
    ]),
  );
}

/** Everything `start` reaches, each with the file that imports it on a shortest route (start: undefined). */
export function reachableFrom(graph: ImportGraph, start: string): Map<string, string | undefined> {
  const via = new Map<string, string | undefined>([[start, undefined]]);
  const queue = [start];
  while (queue.length) {
    const file = queue.shift()!;
    for (const next of graph.get(file) ?? []) {
      if (via.has(next)) continue;
      via.set(next, file);
      queue.push(next);
    }
  }
  return via;
}

/** The route from the start of a reachableFrom() walk to `end`. */
export function routeTo(via: ReadonlyMap<string, string | undefined>, end: string): string[] {
  const route = [end];
  for (let at = via.get(end); at !== undefined; at = via.get(at)) route.unshift(at);
  return route;
}

/** The circles of a graph: each strongly connected set of two or more nodes, or a node that imports itself (Tarjan). */
export function circles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== node);
    if (members.length > 1 || (edges.get(node) ?? []).includes(node)) found.push(members.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The graph between groups of files (`groupOf` undefined: left out), without a group's edges to itself. */
export function groupGraph(graph: ImportGraph, groupOf: (file: string) => string | undefined): Map<string, string[]> {
  const groups = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const source = groupOf(from);
    if (source === undefined) continue;
    const set = groups.get(source) ?? new Set<string>();
    groups.set(source, set);
    for (const to of targets) {
      const target = groupOf(to);
      if (target !== undefined && target !== source) set.add(target);
    }
  }
  return new Map([...groups].map(([group, set]) => [group, [...set].sort()]));
}
