#!/usr/bin/env python3
"""Lists the .cpp and .h files of compiler/ and sim/ longer than the limit
(1,000 lines) and fails unless each says in its header why it is not split.

    scripts/file_sizes.py [--root DIR] [--limit N] [--list]

A long file usually holds two jobs (issue 18); one that is better whole
says so in its leading comment block with a line starting `Size:` followed
by the reason, e.g.

    // Size: one table of every op; cutting it would scatter the rows.

`--list` prints every file with its length, longest first. Exit status: 0
when every long file gives a reason, 1 when one does not (each printed as
`path: N lines, no 'Size:' line in its header`), 2 on a usage error.
"""
import argparse
import os
import sys

TOPS = ('compiler', 'sim')
SUFFIXES = ('.h', '.cpp')


def sources(root):
    """Every .cpp and .h under the folders of TOPS, relative to `root`."""
    found = []
    for top in TOPS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(SUFFIXES):
                    found.append(os.path.relpath(os.path.join(dirpath, name),
                                                 root))
    return sorted(found)


def header_comment(lines):
    """The text of the leading `//` comment block, one entry a line."""
    block = []
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith('//'):
            break
        block.append(stripped.lstrip('/').strip())
    return block


def size_reason(lines):
    """The reason given after `Size:` in the header, or None."""
    for line in header_comment(lines):
        if line.startswith('Size:') and line[len('Size:'):].strip():
            return line[len('Size:'):].strip()
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..'))
    parser.add_argument('--limit', type=int, default=1000,
                        help='most lines a file may have without a reason')
    parser.add_argument('--list', action='store_true',
                        help='print every file with its length')
    args = parser.parse_args()
    if not any(os.path.isdir(os.path.join(args.root, top)) for top in TOPS):
        print(f'file_sizes: none of {", ".join(TOPS)} under {args.root}',
              file=sys.stderr)
        return 2

    lengths = {}
    reasons = {}
    for path in sources(args.root):
        with open(os.path.join(args.root, path), encoding='utf-8') as f:
            lines = f.read().splitlines()
        lengths[path] = len(lines)
        reasons[path] = size_reason(lines)

    if args.list:
        for path, n in sorted(lengths.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f'{n:6d} {path}')

    long_files = [p for p in sorted(lengths) if lengths[p] > args.limit]
    failed = False
    for path in long_files:
        if reasons[path] is None:
            print(f"{path}: {lengths[path]} lines, no 'Size:' line in its "
                  'header')
            failed = True
        else:
            print(f'{path}: {lengths[path]} lines ({reasons[path]})')
    if not failed:
        print(f'{len(lengths)} files in {", ".join(TOPS)}; '
              f'{len(long_files)} over {args.limit} lines, each with a reason')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
