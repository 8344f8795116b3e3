"""Make ``asv publish``'s site readable for lazyarr's results (run after ``asv publish``).

asv 0.6 has no setting for these, so this edits the generated, git-ignored ``.asv/html``:

* graphs show ONE machine by default (asv selects every machine, so the CPU machine's and the
  H200's histories, whose environments differ, share one graph and a legend of environment
  strings); the machine buttons still add the others;
* series with no data for the shown machine (the ``cuda`` rows of the CPU machine, the ``cpu``
  rows of the H200, which skips them) are left out of the graph and its legend;
* the benchmark list leaves out parameter rows with no result on the selected machine (most
  of them: each machine runs one device).

Commit links: the repository has no public address, so ``project_url`` and
``show_commit_url`` stay asv's ``#`` (a link to the page itself, never to a wrong place);
asv always draws the links. Set ``show_commit_url`` in asv.conf.json once there is one.

    asv publish && python tools/asv_site.py && asv preview
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (file, asv 0.6's text, replacement). Each must match exactly once: a newer asv that changed
#: the text makes this tool fail loudly instead of silently doing nothing.
PATCHES = [
    ("graphdisplay.js",
     "            state = {};\n            state.machine = index.params.machine;\n",
     "            state = {};\n            state.machine = index.params.machine.slice(0, 1);  "
     "/* lazyarr: one machine per graph */\n"),
    ("graphdisplay.js",
     "                    orig_graphs.push({\n                        data: series,",
     "                    if (!series.some(function (p) { return typeof p[1] === \"number\" && p[1] === p[1]; })) {\n"
     "                        return;  /* lazyarr: no data on this machine: no line, no legend */\n"
     "                    }\n"
     "                    orig_graphs.push({\n                        data: series,"),
    ("summarylist.js",
     "        $.each(data, function(row_idx, row) {\n            var tr = $('<tr/>');",
     "        $.each(data, function(row_idx, row) {\n"
     "            if (row.idx !== null && row.last_value === null) {\n"
     "                return;  /* lazyarr: a parameter row with no result on this machine */\n"
     "            }\n"
     "            var tr = $('<tr/>');"),
]
MARK = "/* lazyarr:"


def patch(html: str) -> list[str]:
    done = []
    for name, old, new in PATCHES:
        path = os.path.join(html, name)
        with open(path) as f:
            text = f.read()
        if new in text:
            continue                                   # already patched
        if text.count(old) != 1:
            raise SystemExit(f"{path}: asv's code changed ({old.strip()[:60]!r} not found once); "
                             "update tools/asv_site.py for this asv version")
        with open(path, "w") as f:
            f.write(text.replace(old, new))
        done.append(f"{name}: {new[new.index(MARK):].split('*/')[0][len(MARK):].strip()}")
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", default=os.path.join(ROOT, ".asv", "html"), help="asv's html_dir")
    args = ap.parse_args(argv)
    if not os.path.exists(os.path.join(args.html, "index.json")):
        print(f"{args.html}: no published site; run `asv publish` first", file=sys.stderr)
        return 1
    done = patch(args.html)
    print("\n".join(done) if done else "already patched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
