"""Make ``asv publish``'s HTML viewable without internet access.

asv's pages load jQuery, flot, bootstrap, md5 and stupidtable from CDNs. On a machine that
reaches only the package registries (like this project's), fetch the same versions from npm
and point the pages at local copies:

    asv publish
    python tools/asv_html_offline.py            # npm install into .asv/html/_vendor, rewrite
    asv preview                                  # or: python -m http.server -d .asv/html

The published HTML itself needs no change for a reader with internet access; this only edits
the generated, git-ignored ``.asv/html``.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the versions asv 0.6's templates reference
PACKAGES = ["jquery@3.3.1", "flot@0.8.3", "flot-orderbars@1.0.0", "stupid-table-plugin",
            "blueimp-md5@2.19.0", "bootstrap@3.1.1"]
TAG = re.compile(r'(<(?:script|link)\b[^>]*?(?:src|href)=")(https://[^"]+)("[^>]*>)')


def _index(node_modules: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(node_modules):
        dirnames[:] = [d for d in dirnames if d not in ("examples", "tests", "test", "docs")]
        for name in filenames:
            if name.endswith((".js", ".css")):
                found.setdefault(name, os.path.join(dirpath, name))
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--html", default=os.path.join(ROOT, ".asv", "html"))
    args = ap.parse_args(argv)
    vendor = os.path.join(args.html, "_vendor")
    modules = os.path.join(vendor, "node_modules")
    if not os.path.isdir(modules):
        os.makedirs(vendor, exist_ok=True)
        for pkg in PACKAGES:  # one by one: npm resolves each exact version on its own
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", vendor, pkg],
                           check=True)
    files = _index(modules)
    missing = set()

    def local(match: re.Match) -> str:
        url = match.group(2)
        name = url.rsplit("/", 1)[-1]
        plain = re.sub(r"-\d+(\.\d+)+", "", name)          # jquery-3.3.1.min.js -> jquery.min.js
        path = next((files[n] for n in (name, plain, plain.replace(".min.", ".")) if n in files), None)
        if path is None:
            missing.add(url)
            return match.group(0)
        rel = os.path.relpath(path, args.html).replace(os.sep, "/")
        rest = re.sub(r'\s(integrity|crossorigin|referrerpolicy)="[^"]*"', "", match.group(3))
        return match.group(1) + rel + rest

    changed = 0
    for name in os.listdir(args.html):
        if name.endswith(".html"):
            path = os.path.join(args.html, name)
            with open(path) as f:
                text = f.read()
            new = TAG.sub(local, text)
            if new != text:
                with open(path, "w") as f:
                    f.write(new)
                changed += 1
    for url in sorted(missing):
        print("no local copy for", url, file=sys.stderr)
    print(f"rewrote {changed} page(s) in {os.path.relpath(args.html, ROOT)} to use "
          f"{os.path.relpath(vendor, ROOT)}")
    return 1 if missing else 0


if __name__ == "__main__":
    shutil.which("npm") or sys.exit("npm is needed (apt-get install npm)")
    sys.exit(main())
