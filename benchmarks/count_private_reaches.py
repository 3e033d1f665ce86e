"""Reaches of a private name from outside its object, in the package's source.

A reach is ``obj._name`` (one leading underscore, not a dunder) where the code is not a
method of ``obj``'s class family, or ``from module import _name`` of anything but a private
module. ``obj._name`` counts as the class family's own when it is on a method's first
parameter (``self``, ``cls``) or ``super()``, or inside a class whose ancestors or
descendants in the package (by class name) define ``_name`` (a method, a class attribute or
an assignment ``self._name = ...``): a method reaching a member of another object of its
own family (a fresh copy of ``self``, a per-class estimator, another copula of the family)
is not reaching outside. A reach is *across packages* when it leaves its subpackage of
``fusion`` (``fusion.bernstein``, ``fusion.persistence``, ...; the top-level private
modules count as one package, ``fusion``) or the project (scikit-learn's private members);
the script marks so the reaches whose name no other file of the same subpackage defines.
Prints every reach and the totals::

    python benchmarks/count_private_reaches.py [root]   # default: fusion
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _base_name(node.value)
    return None


def _defined(cls: ast.ClassDef) -> set[str]:
    """Private names a class defines: methods, class attributes, ``self._x = ...``."""
    out = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _private(node.name):
            out.add(node.name)
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            for el in t.elts if isinstance(t, ast.Tuple) else [t]:
                if isinstance(el, ast.Name) and _private(el.id):
                    out.add(el.id)
                elif isinstance(el, ast.Attribute) and _private(el.attr):
                    out.add(el.attr)
    return out


def _package(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).parts
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", nargs="?", default="fusion")
    args = p.parse_args()
    root = Path(args.root)
    files = sorted(root.rglob("*.py"))
    trees = {f: ast.parse(f.read_text(), filename=str(f)) for f in files}
    defines: dict[str, set[str]] = defaultdict(set)  # class name -> private names
    bases: dict[str, set[str]] = defaultdict(set)
    names_by_package: dict[str, dict[str, set[Path]]] = defaultdict(lambda: defaultdict(set))
    for f, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                defines[node.name] |= _defined(node)
                bases[node.name] |= {b for b in map(_base_name, node.bases) if b}
                for name in _defined(node):
                    names_by_package[_package(f, root)][name].add(f)
            elif isinstance(node, ast.FunctionDef) and _private(node.name):
                names_by_package[_package(f, root)][node.name].add(f)
    children: dict[str, set[str]] = defaultdict(set)
    for c, bs in bases.items():
        for b in bs:
            children[b].add(c)

    def reach(c: str, links: dict[str, set[str]]) -> set[str]:
        seen, todo = set(), [c]
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo.extend(links.get(k, ()))
        return seen

    def family(c: str) -> set[str]:
        return reach(c, bases) | reach(c, children)

    total = across = 0
    by_file: dict[Path, int] = defaultdict(int)
    for f, tree in trees.items():
        found = []

        def visit(node, cls, me, in_class=False, f=f, found=found):
            if isinstance(node, ast.ClassDef):
                cls, in_class = node.name, True
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if in_class:  # a method: its first parameter is its object (or class)
                    args = node.args.posonlyargs + node.args.args
                    static = any(_base_name(d) == "staticmethod" for d in node.decorator_list)
                    me = args[0].arg if args and not static else None
                in_class = False
            if isinstance(node, ast.Attribute) and _private(node.attr):
                owner = node.value
                own = (isinstance(owner, ast.Name) and owner.id == me) or (
                    isinstance(owner, ast.Call)
                    and isinstance(owner.func, ast.Name)
                    and owner.func.id == "super"
                )
                in_family = cls is not None and any(node.attr in defines[k] for k in family(cls))
                if not (own or in_family):
                    found.append((node.lineno, ast.unparse(node), node.attr, None))
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if not _private(alias.name):
                        continue
                    base = f.parent
                    for _ in range(node.level - 1):
                        base = base.parent
                    mod = base.joinpath(*(node.module or "").split("."), alias.name)
                    if node.level and (mod.with_suffix(".py").exists() or mod.is_dir()):
                        continue  # a private module of the package
                    where = "." * node.level + (node.module or "")
                    found.append((node.lineno, f"from {where} import {alias.name}",
                                  alias.name, node.level == 0))  # fmt: skip
            for child in ast.iter_child_nodes(node):
                visit(child, cls, me, in_class)

        visit(tree, None, None)
        for line, expr, name, foreign in sorted(found):
            package = _package(f, root)
            local = any(g != f for g in names_by_package[package].get(name, ()))
            home = [pk for pk, names in names_by_package.items() if name in names and pk != package]
            is_across = foreign or (not local and (bool(home) or foreign is None))
            across += is_across
            print(f"{f}:{line}: {expr}" + ("   [across packages]" if is_across else ""))
            by_file[f] += 1
            total += 1
    print()
    for f, k in sorted(by_file.items(), key=lambda kv: -kv[1]):
        print(f"{k:4d}  {f}")
    print(f"{total:4d}  total, {across} across packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
