#!/usr/bin/env python3
"""The floors of src/ (docs/architecture.md): every #include "..." in src/
names a header of the file's own folder, of a folder its row in the
architecture table allows, of lang/ or of include/; no cycle between folders;
libtile_rt (the tile_rt_core archive) built from support/ and runtime/ only.
Prints each violation with its file and line; exits 1 if there is one."""
import os, re, sys

SHARED = {'lang', 'include'}


def allowed_uses():
    """folder -> set of folders, from the '| folder | holds | may use |' table."""
    rules, in_table = {}, False
    for line in open('docs/architecture.md', encoding='utf-8'):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if cells[:1] == ['folder'] and cells[-1:] == ['may use']:
            in_table = True
            continue
        if in_table:
            if not line.startswith('|'):
                break
            if set(cells[0]) <= {'-'}:
                continue
            uses = {u.strip() for u in cells[-1].split(',') if u.strip()}
            rules[cells[0].strip('`')] = uses
    return rules


def folder_of(path):
    parts = path.split('/')
    return parts[1] if parts[0] == 'src' and len(parts) > 2 else parts[0]


def resolve(directory, name):
    for base in (directory, 'src', 'lang', 'include'):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.exists(candidate):
            return candidate
    return None


def includes():
    """(file, line number, included path) for every quoted include in src/."""
    for directory, _, files in os.walk('src'):
        for name in sorted(files):
            if not name.endswith(('.c', '.h', '.def')):
                continue
            path = os.path.join(directory, name)
            for number, line in enumerate(open(path, errors='replace'), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m:
                    yield path, number, m.group(1), resolve(directory, m.group(1))


def find_cycle(edges):
    state = {}

    def visit(node, trail):
        state[node] = 'open'
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 'open':
                return trail + [node, nxt]
            if nxt not in state:
                found = visit(nxt, trail + [node])
                if found:
                    return found
        state[node] = 'done'
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def rt_sources():
    text = open('CMakeLists.txt').read()
    m = re.search(r'add_library\(tile_rt_core STATIC(.*?)\)', text, re.S)
    return m.group(1).split() if m else []


def main():
    rules = allowed_uses()
    problems, edges = [], {}
    if not rules:
        problems.append('docs/architecture.md: no "| folder | holds | may use |" table')
    for folder in sorted(os.listdir('src')):
        if os.path.isdir(os.path.join('src', folder)) and folder != 'package' and folder not in rules:
            problems.append(f'src/{folder}: not in the table of docs/architecture.md')
    for path, number, name, target in includes():
        if target is None:
            problems.append(f'{path}:{number}: #include "{name}" is not a file of src/, lang/ or include/')
            continue
        a, b = folder_of(path), folder_of(target)
        if a == b or b in SHARED:
            continue
        edges.setdefault(a, set()).add(b)
        if b not in rules.get(a, set()):
            problems.append(f'{path}:{number}: {a}/ includes {target}, but {a}/ may use only '
                            f'{", ".join(sorted(rules.get(a, ()))) or "nothing below it"}')
    cycle = find_cycle(edges)
    if cycle:
        problems.append('a cycle between folders: ' + ' -> '.join(cycle))
    sources = rt_sources()
    if not sources:
        problems.append('CMakeLists.txt: no tile_rt_core library')
    for source in sources:
        if folder_of(source) not in ('support', 'runtime'):
            problems.append(f'CMakeLists.txt: libtile_rt (tile_rt_core) is built from {source}, '
                            'but it is support/ and runtime/ only')
    for p in problems:
        print(p)
    if not problems:
        print(f'{len(rules)} floors, {sum(len(v) for v in edges.values())} arrows between folders, all downward')
    return 1 if problems else 0


def self_test(root):
    """The check fails on a copy of the tree with an upward include, a
    cycle, and a compiler file in libtile_rt (so it is not a check that
    cannot fail)."""
    import shutil, subprocess, tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for part in ('src', 'docs', 'lang', 'include', 'CMakeLists.txt'):
            source = os.path.join(root, part)
            (shutil.copytree if os.path.isdir(source) else shutil.copy)(source, os.path.join(tmp, part))
        with open(os.path.join(tmp, 'src/support/arena.c'), 'a') as f:
            f.write('#include "../driver/driver.h"\n')
        with open(os.path.join(tmp, 'src/runtime/json.c'), 'a') as f:
            f.write('#include "../tir/tir.h"\n')
        cmake = os.path.join(tmp, 'CMakeLists.txt')
        text = open(cmake).read().replace('add_library(tile_rt_core STATIC', 'add_library(tile_rt_core STATIC\n  src/tir/fold.c', 1)
        open(cmake, 'w').write(text)
        run = subprocess.run([sys.executable, __file__, tmp], capture_output=True, text=True)
        expected = ['src/support/arena.c', 'support/ includes src/driver/driver.h', 'src/runtime/json.c',
                    'a cycle between folders', 'is built from src/tir/fold.c']
        missing = [e for e in expected if e not in run.stdout]
        if run.returncode != 1 or missing:
            print(f'self-test: exit {run.returncode}, missing {missing}:\n{run.stdout}')
            return 1
        print('self-test: the check reports an upward include, a cycle and a compiler file in libtile_rt')
        return 0


if __name__ == '__main__':
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
    if sys.argv[1:2] == ['--self-test']:
        sys.exit(self_test(here))
    os.chdir(sys.argv[1] if len(sys.argv) > 1 else here)
    sys.exit(main())
