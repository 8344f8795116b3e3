"""Write the op table and API reference pages from lazyarr's registry (run by conf.py)."""
from __future__ import annotations

import os
from collections import defaultdict

from lazyarr._registry import OPS


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        lines.append("   * - " + row[0])
        lines += [f"     - {cell}" for cell in row[1:]]
    return "\n".join(lines) + "\n"


def write(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    by_category: dict[str, list] = defaultdict(list)
    for op in OPS.values():
        by_category[op.category].append(op)
    operator_of = {op.name: op.operator for op in OPS.values() if op.operator}
    out = ["Operations", "==========", "",
           "Every operation lazyarr knows, generated from its op registry (``lazyarr._registry.OPS``).",
           "Elementwise operations are recorded in lazy mode; reductions materialize.", ""]
    for category, ops in by_category.items():
        out += [category.capitalize(), "-" * len(category), ""]
        rows = []
        for op in ops:
            np_name = getattr(op.numpy, "__name__", op.name)
            dunder = f"``__{operator_of[op.name]}__``" if op.name in operator_of else ""
            rows.append((f":func:`lazyarr.{op.name}`" if op.kind != "cast" else "``x.astype(dtype)``",
                         str(op.nin), f"``numpy.{np_name}``", dunder, op.doc))
        out.append(_table(rows, ("lazyarr", "arrays in", "NumPy semantics of", "operator", "what")))
    with open(os.path.join(outdir, "ops.rst"), "w") as f:
        f.write("\n".join(out))

    api = ["API reference", "=============", "", ".. currentmodule:: lazyarr", "",
           "Arrays", "------", "", ".. autoclass:: LazyArray", "   :members: compute, to_numpy, "
           "shape, dtype, ndim, size, device, is_materialized, item", "",
           "Creation", "--------", ""]
    api += [f".. autofunction:: {n}" for n in ("asarray", "zeros", "ones", "full", "empty", "arange",
                                                "linspace", "zeros_like", "ones_like", "full_like",
                                                "empty_like")]
    api += ["", "Configuration", "-------------", ""]
    api += [f".. autofunction:: {n}" for n in ("config", "set_config", "get_config")]
    api += ["", ".. autoclass:: Config", ".. autoclass:: FallbackWarning",
            ".. autoclass:: FallbackError", "", "Plans", "-----", "", ".. autofunction:: explain", "",
            ".. autoclass:: Plan", ".. autoclass:: Kernel", ""]
    for title, kind in (("Elementwise functions", "elementwise"), ("Reductions", "reduction")):
        api += [title, "-" * len(title), ""]
        api += [f".. autofunction:: {op.name}" for op in OPS.values() if op.kind == kind]
        api.append("")
    api += [".. autofunction:: astype", ""]
    with open(os.path.join(outdir, "api.rst"), "w") as f:
        f.write("\n".join(api))
    docs = os.path.dirname(outdir)
    extra = [p for p in ("cpu-backend", "gpu-backend", "performance", "testing")
             if os.path.exists(os.path.join(docs, p + ".rst"))]
    toc = [".. toctree::", "   :maxdepth: 1", "   :caption: Backends, performance, testing", ""]
    with open(os.path.join(outdir, "extra_toc.rst"), "w") as f:
        f.write("\n".join(toc + [f"   /{p}" for p in extra]) + "\n" if extra else "")  # from docs/
