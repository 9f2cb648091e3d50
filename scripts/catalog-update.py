#!/usr/bin/env python3
"""Add or refresh a release in the release catalog (manifests/catalog/).

    scripts/catalog-update.py redistrib_9.28.0.json [--origin TEXT]

reads NVIDIA's redistrib JSON (a file as published at
https://developer.download.nvidia.com/compute/cudnn/redist/), keeps the
top-level release_* members and the "cudnn" product (the other products,
cudnn_jit and cudnn_samples, are not installed by cudnn-deploy), checks
every entry the way the tool will (sha256 64 hex digits, md5 32, size
decimal, relative path safe and under cudnn/<platform>/), and writes
manifests/catalog/redistrib_<label>.json deterministically (4-space
indent, NVIDIA's key order). The label is release_label, else the file
name's.

A release new to facts.json gets an entry copied from the nearest older
release ("inherited_from" says which) so that the tool keeps working; read
the release's support matrix and correct it, then delete "inherited_from".
If NVIDIA's JSON now names another sha256 for an archive name already in
the catalog (a re-spin), the old digest is kept in facts.json "respins"
with its origin, so that a file downloaded before still verifies.

--check only verifies every file of the catalog (what CI can run).
Standard library only; docs/releases.md describes the catalog.
"""

import argparse
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.join(HERE, "..", "manifests", "catalog")
HEX = re.compile(r"^[0-9a-fA-F]+$")


def fail(msg):
    sys.exit("catalog-update: " + msg)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, object_pairs_hook=collections.OrderedDict)


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def check_entry(where, e):
    rel = e.get("relative_path")
    if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/") \
            or "\\" in rel or not rel.startswith("cudnn/"):
        fail("%s.relative_path: not a safe path under cudnn/: %r" % (where, rel))
    sha = e.get("sha256")
    if not isinstance(sha, str) or len(sha) != 64 or not HEX.match(sha):
        fail("%s.sha256: expected 64 hex digits" % where)
    md5 = e.get("md5")
    if md5 is not None and (len(md5) != 32 or not HEX.match(md5)):
        fail("%s.md5: expected 32 hex digits" % where)
    size = e.get("size")
    if size is not None and (not isinstance(size, str) or not size.isdigit()):
        fail("%s.size: expected decimal digits in a string" % where)


def entries(doc, where):
    """{relative_path: entry} of the cudnn product, every shape checked."""
    prod = doc.get("cudnn")
    if not isinstance(prod, dict) or not isinstance(prod.get("version"), str):
        fail("%s: no cudnn product with a version" % where)
    vkey(prod["version"])
    out = {}
    for plat, v in prod.items():
        if not isinstance(v, dict):
            continue
        if "relative_path" in v:
            check_entry("%s: cudnn.%s" % (where, plat), v)
            out[v["relative_path"]] = v
        for var, e in v.items():
            if var.startswith("cuda") and isinstance(e, dict):
                check_entry("%s: cudnn.%s.%s" % (where, plat, var), e)
                out[e["relative_path"]] = e
    if not out:
        fail("%s: the cudnn product lists no archive" % where)
    return out


def label_of(doc, path):
    label = doc.get("release_label")
    if not label:
        m = re.match(r"redistrib_([0-9.]+)\.json$", os.path.basename(path))
        if not m:
            fail("%s: no release_label and no label in the file name" % path)
        label = m.group(1)
    vkey(label)
    return label


def trimmed(doc):
    out = collections.OrderedDict()
    for k, v in doc.items():
        if k.startswith("release_") or k == "cudnn":
            out[k] = v
    return out


def write(path, doc):
    text = json.dumps(doc, indent=4, ensure_ascii=False) + "\n"
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def check_all():
    labels = []
    for name in sorted(os.listdir(CATALOG)):
        if name.startswith("redistrib_") and name.endswith(".json"):
            p = os.path.join(CATALOG, name)
            doc = load(p)
            entries(doc, name)
            labels.append(label_of(doc, p))
    facts = load(os.path.join(CATALOG, "facts.json"))
    missing = [l for l in labels if l not in facts["releases"]]
    if missing:
        fail("facts.json has no entry for %s" % ", ".join(missing))
    print("catalog-update: %d releases, all entries valid" % len(labels))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("redistrib", nargs="?")
    ap.add_argument("--origin", default="NVIDIA's redistrib JSON",
                    help="where the file came from (kept for a re-spin)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check or not a.redistrib:
        return check_all()
    doc = load(a.redistrib)
    new = entries(doc, a.redistrib)
    label = label_of(doc, a.redistrib)
    dest = os.path.join(CATALOG, "redistrib_%s.json" % label)
    facts_path = os.path.join(CATALOG, "facts.json")
    facts = load(facts_path)
    if os.path.exists(dest):
        old = entries(load(dest), dest)
        for rel, e in old.items():
            if rel in new and new[rel]["sha256"].lower() != e["sha256"].lower():
                known = facts.setdefault("respins", {}).setdefault(rel, [])
                if not any(k["sha256"] == e["sha256"] for k in known):
                    known.append(collections.OrderedDict(
                        [("sha256", e["sha256"]), ("size", e.get("size")),
                         ("source", "%s, before %s" % (
                             "redistrib_%s.json" % label, a.origin))]))
                print("re-spin: %s: %s -> %s" % (rel, e["sha256"],
                                                 new[rel]["sha256"]))
    write(dest, trimmed(doc))
    rels = facts["releases"]
    if label not in rels:
        older = [l for l in rels if vkey(l) < vkey(label)]
        base = max(older, key=vkey) if older else None
        entry = collections.OrderedDict(json.loads(json.dumps(rels[base]))) \
            if base else collections.OrderedDict()
        entry["inherited_from"] = base
        cudas = sorted({int(re.search(r"_cuda(\d+)", r).group(1))
                        for r in new})
        for c in cudas:
            entry.setdefault("cuda%d" % c, {})
        rels[label] = entry
        print("facts: %s copied from %s; check its support matrix" %
              (label, base))
    facts["releases"] = collections.OrderedDict(
        sorted(rels.items(), key=lambda kv: vkey(kv[0])))
    with open(facts_path + ".tmp", "w", encoding="utf-8") as f:
        f.write(json.dumps(facts, indent=2) + "\n")
    os.replace(facts_path + ".tmp", facts_path)
    print("wrote %s (%d archives)" % (os.path.relpath(dest), len(new)))


if __name__ == "__main__":
    main()
