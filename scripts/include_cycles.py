#!/usr/bin/env python3
"""Lists the #include edges between the folders of compiler/ and between its
modules (a module is a header with its .cpp: Emit.h and Emit.cpp are one),
and fails on a cycle in either graph, naming it.

    scripts/include_cycles.py [--root DIR] [--list]

A cycle between folders means neither can be read, built or tested without
the other (issue 18: planning and emission included each other); a cycle
between modules is the same within a folder. `--list` prints every edge
between folders with the files that make it. Exit status: 0 without a
cycle, 1 with one (each printed as `a -> b -> a`), 2 on a usage error.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_SUFFIXES = ('.h', '.cpp', '.def')


def module_of(path):
    """compiler/passes/Emit.cpp -> compiler/passes/Emit."""
    return os.path.splitext(path)[0]


def folder_of(path):
    """compiler/passes/Emit.cpp -> compiler/passes."""
    return os.path.dirname(path)


def collect(root, top):
    """(file, included file) for every quoted include of a file under `top`
    that names a file under `top`, both relative to `root`."""
    edges = []
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for name in sorted(files):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding='utf-8') as f:
                text = f.read()
            for target in INCLUDE.findall(text):
                if target.startswith(top + '/'):
                    edges.append((rel, target))
    return sorted(edges)


def find_cycles(graph):
    """The cycles of `graph` (node -> set of nodes), one per strongly
    connected component of more than one node or with a self edge, each
    as a closed list of nodes found by a walk inside the component."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def strongconnect(v):
        # Tarjan's algorithm, iterative so deep graphs do not recurse.
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)

    cycles = []
    for component in components:
        members = set(component)
        start = component[0]
        if len(component) == 1 and start not in graph.get(start, ()):
            continue
        # A shortest path back to `start` inside the component.
        previous = {start: None}
        queue = [start]
        found = None
        while queue and found is None:
            node = queue.pop(0)
            for w in sorted(graph.get(node, ())):
                if w == start:
                    found = node
                    break
                if w in members and w not in previous:
                    previous[w] = node
                    queue.append(w)
        path = [start]
        node = found
        while node is not None and node != start:
            path.insert(1, node)
            node = previous[node]
        cycles.append(path + [start])
    return cycles


def graph_of(edges, key):
    graph = {}
    for source, target in edges:
        a, b = key(source), key(target)
        graph.setdefault(a, set())
        if a != b:
            graph[a].add(b)
    return graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..'))
    parser.add_argument('--top', default='compiler',
                        help='the folder whose includes are checked')
    parser.add_argument('--list', action='store_true',
                        help='print the edges between folders')
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, args.top)):
        print(f'include_cycles: no folder {args.top} under {args.root}',
              file=sys.stderr)
        return 2

    edges = collect(args.root, args.top)
    folders = graph_of(edges, folder_of)
    modules = graph_of(edges, module_of)

    if args.list:
        by_pair = {}
        for source, target in edges:
            pair = (folder_of(source), folder_of(target))
            if pair[0] != pair[1]:
                by_pair.setdefault(pair, []).append(f'{source} -> {target}')
        for (a, b), lines in sorted(by_pair.items()):
            print(f'{a} -> {b} ({len(lines)} includes)')
            for line in lines:
                print('    ' + line)

    failed = False
    for kind, graph in (('folders', folders), ('modules', modules)):
        for cycle in find_cycles(graph):
            print(f'include cycle between {kind}: ' + ' -> '.join(cycle))
            failed = True
    if not failed:
        print(f'no include cycle between the {len(folders)} folders and '
              f'{len(modules)} modules of {args.top}/ '
              f'({len(edges)} includes)')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
