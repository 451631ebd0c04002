"""Checks that the docs name everything the tables and the code define:

  - every builtin and standard-library function `tilec --list-builtins` prints, in docs/language.md;
    (a name counts where it is an identifier in a code span: `tl.cdiv(n, 8)`, `x.to(tl.float16)`)
  - every tile IR op `tilec --list-ops` prints, in docs/ir.md (or, for GPU-layout ops, docs/tgir.md);
  - every option of `tilec --help`, `tilec run --help` and `tilec pack --help`, in README.md or docs/;
  - every TILE_* environment variable src/ reads, in docs/abi.md's environment table;
  - no getenv outside src/runtime/context.c (the environment is read in one place);
  - docs/language.md does not call a stage that exists "the next stage".

  check_docs.py TILEC SOURCE_DIR

Prints each thing missing, with where it was expected, and exits 1; prints "ok N" when all N are there."""
import glob
import os
import re
import subprocess
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def table_names(text):
    """The first column's `name` of a markdown table printed by tilec."""
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)` \|", text, re.M)]


def help_options(text):
    """Options of a --help text: each option line's first word ('  --emit=STAGE  ...' gives --emit)."""
    found = re.findall(r"^  (--?[A-Za-z][A-Za-z-]*)", text, re.M)
    return sorted(set(found))


def env_variables(src):
    """TILE_* names that src/ passes as a whole string literal (getenv, copy_env, env_number, env_switch)."""
    names = set()
    for path in glob.glob(os.path.join(src, "**", "*.c"), recursive=True):
        names.update(re.findall(r'"(TILE_[A-Z0-9_]+)"', read(path)))
    return sorted(names)


def getenv_outside_context(src):
    bad = []
    for path in glob.glob(os.path.join(src, "**", "*.c"), recursive=True):
        if path.endswith(os.path.join("runtime", "context.c")):
            continue
        if re.search(r"\bgetenv\s*\(", read(path)):
            bad.append(os.path.relpath(path, src))
    return bad


def code_words(text):
    """The identifiers inside the text's code spans (`tl.cdiv(x, 8)`, `add sub mul`, `x.to(tl.float16)`)."""
    words = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span))
    return words


def main(argv):
    tilec, root = argv[1], argv[2]
    run = lambda *args: subprocess.run([tilec, *args], check=True, capture_output=True, text=True).stdout
    docs = {os.path.basename(p): read(p) for p in glob.glob(os.path.join(root, "docs", "*.md"))}
    readme = read(os.path.join(root, "README.md"))
    everything = readme + "".join(docs.values())
    missing, checked = [], 0

    language, ir = code_words(docs["language.md"]), code_words(docs["ir.md"] + docs["tgir.md"])
    for name in sorted(set(table_names(run("--list-builtins")))):
        checked += 1
        if name not in language:
            missing.append("builtin `%s` (tilec --list-builtins) is not in docs/language.md" % name)
    for name in table_names(run("--list-ops")):
        checked += 1
        if name not in ir:
            missing.append("op `%s` (tilec --list-ops) is not in docs/ir.md or docs/tgir.md" % name)
    for command in ([], ["run"], ["pack"]):
        for option in help_options(run(*command, "--help")):
            checked += 1
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(option), everything):
                missing.append("option %s (tilec %s--help) is not in README.md or docs/" % (option, " ".join(command + [""])))
    abi = docs["abi.md"]
    environment = abi[abi.index("**Environment**"):]
    for name in env_variables(os.path.join(root, "src")):
        checked += 1
        if not re.search(r"^\| `%s`" % name, environment, re.M):
            missing.append("environment variable %s (read by src/) is not in docs/abi.md's environment table" % name)
    for path in getenv_outside_context(os.path.join(root, "src")):
        missing.append("src/%s calls getenv: the environment is read in src/runtime/context.c alone" % path)
    stale = re.search(r"[^.]*\bthe next stage\b[^.]*\.", docs["language.md"])
    if stale:
        missing.append("docs/language.md still says: %s" % stale.group(0).strip())

    for line in missing:
        print(line)
    if missing:
        return 1
    print("ok %d" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
