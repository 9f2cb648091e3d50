"""Images (docs/containers.md): `sbom` documents validated against the
official SPDX 2.3 and CycloneDX 1.6 JSON schemas (tests/schemas/, with
python3-jsonschema) for every layout and profile, byte-identical across
runs and derived from the receipt only; `install --profile runtime|dev|full`
and what status and verify say about what a profile left out; `--mtime` and
SOURCE_DATE_EPOCH giving two fresh trees identical tar layers."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fleetfix  # noqa: E402
from cddtest import (FIX, LINUX, WINDOWS, CddTestCase, install_args,  # noqa: E402
                     plan_of, run, run_json)

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.normpath(os.path.join(HERE, "..", "schemas"))
SPDX_SCHEMA = os.path.join(SCHEMAS, "spdx-schema-2.3.json")
CDX_SCHEMA = os.path.join(SCHEMAS, "bom-1.6.schema.json")
CDX_REFS = {"spdx.schema.json": os.path.join(SCHEMAS, "spdx.schema.json"),
            "jsf-0.82.schema.json": os.path.join(SCHEMAS,
                                                 "jsf-0.82.schema.json")}

try:
    import jsonschema
except ImportError:          # python3-jsonschema: scripts/install-deps.sh
    jsonschema = None

ROLES_OF = {
    "full": {"runtime", "header", "import_lib", "static_lib", "license",
             "symlink"},
    "dev": {"runtime", "header", "import_lib", "license", "symlink"},
    "runtime": {"runtime", "license", "symlink"},
}
EPOCH = 1700000000


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def cdx_validator():
    """A validator for CycloneDX 1.6 whose $refs (spdx.schema.json, the
    licence-id list; jsf-0.82.schema.json, signatures) resolve to the
    copies in tests/schemas, by their $id, never over the network: a $ref
    to anything else is an error, not a silent pass."""
    schema = load(CDX_SCHEMA)
    docs = [schema] + [load(p) for p in CDX_REFS.values()]
    fmt = jsonschema.Draft7Validator.FORMAT_CHECKER
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT7
    except ImportError:      # python3-jsonschema before 4.18
        store = {d["$id"]: d for d in docs}
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        return jsonschema.Draft7Validator(schema, resolver=resolver,
                                          format_checker=fmt)

    def offline(uri):
        raise LookupError("not in tests/schemas (no network): " + uri)

    registry = Registry(retrieve=offline).with_resources(
        [(d["$id"], Resource.from_contents(d, default_specification=DRAFT7))
         for d in docs])
    return jsonschema.Draft7Validator(schema, registry=registry,
                                      format_checker=fmt)


def validate(doc, fmt):
    """The list of schema errors of doc (an SBOM) against the official
    schema of its format."""
    if jsonschema is None:
        raise AssertionError("python3-jsonschema is not installed "
                             "(scripts/install-deps.sh installs it)")
    if fmt == "spdx":
        v = jsonschema.Draft7Validator(load(SPDX_SCHEMA))
    else:
        v = cdx_validator()
    return ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
            for e in v.iter_errors(doc)]


def chain_end(files, path):
    """The receipt record a symlink's chain ends at."""
    for _ in range(40):
        f = files[path]
        if "symlink" not in f:
            return f
        path = os.path.join(os.path.dirname(path), f["symlink"])
    raise AssertionError("loop at " + path)


class SbomCase(CddTestCase):

    def sbom(self, ws, fmt, *extra, expect=0):
        return run(["sbom"] + ws.target_args + ["--format", fmt]
                   + list(extra), expect=expect)

    def require_schema(self, fmt):
        """The schemas are part of the tests (tests/schemas): their absence,
        or that of python3-jsonschema, fails rather than skips."""
        self.assertIsNotNone(jsonschema, "python3-jsonschema is not "
                             "installed (scripts/install-deps.sh installs "
                             "it)")
        for p in ([SPDX_SCHEMA] if fmt == "spdx"
                  else [CDX_SCHEMA] + list(CDX_REFS.values())):
            self.assertTrue(os.path.exists(p), p + " is missing "
                            "(tests/schemas/README.md says where it comes "
                            "from)")

    def check_document(self, ws, fmt, profile="full", components=()):
        """sbom FORMAT on ws: valid against the official schema, the same
        bytes twice, every receipt file in it with its sha256."""
        self.require_schema(fmt)
        one = self.sbom(ws, fmt)
        two = self.sbom(ws, fmt)
        self.assertEqual(one.out, two.out, "the same tree, other bytes")
        doc = json.loads(one.out)
        errors = validate(doc, fmt)
        self.assertEqual(errors, [], "%s: not valid against the schema" % fmt)
        rc = cddtest.read_receipt(ws.tree)
        files = {f["path"]: f for f in rc["files"]}
        if fmt == "spdx":
            got = {f["fileName"][2:]: f for f in doc["files"]}
            self.assertEqual(sorted(got), sorted(files))
            for p, f in got.items():
                self.assertEqual(f["checksums"][0]["checksumValue"],
                                 chain_end(files, p)["sha256"], p)
            pkg = doc["packages"][0]
            self.assertEqual(pkg["versionInfo"], rc["manifest"]["version"])
            self.assertEqual(pkg["checksums"][0]["checksumValue"],
                             rc["archive"]["sha256"])
            self.assertEqual(pkg["downloadLocation"],
                             rc["archive"].get("url", "NOASSERTION"))
            self.assertIn("profile %s" % profile, pkg["comment"])
            self.assertEqual(doc["creationInfo"]["created"],
                             rc["installed_at"])
            self.assertEqual(sorted(p["name"] for p in doc["packages"][1:]),
                             sorted(components))
            rel = {(r["spdxElementId"], r["relationshipType"])
                   for r in doc["relationships"]}
            self.assertIn(("SPDXRef-DOCUMENT", "DESCRIBES"), rel)
        else:
            got = {c["name"]: c for c in doc["components"]
                   if c["type"] == "file"}
            self.assertEqual(sorted(got), sorted(files))
            for p, c in got.items():
                if "symlink" in files[p]:
                    self.assertNotIn("hashes", c, p)
                else:
                    self.assertEqual(c["hashes"][0]["content"],
                                     files[p]["sha256"], p)
            main = doc["metadata"]["component"]
            self.assertEqual(main["version"], rc["manifest"]["version"])
            self.assertEqual(main["hashes"][0]["content"],
                             rc["archive"]["sha256"])
            props = {p["name"]: p["value"] for p in main["properties"]}
            self.assertEqual(props["cudnn-deploy:profile"], profile)
            self.assertEqual(props["cudnn-deploy:platform"],
                             rc["manifest"]["platform"])
            self.assertEqual(props["cudnn-deploy:cuda_variant"],
                             "cuda%d" % rc["manifest"]["cuda_major"])
            tool = doc["metadata"]["tools"]["components"][0]
            self.assertEqual((tool["name"], tool["version"]),
                             ("cudnn-deploy", rc["tool_version"]))
            self.assertEqual(sorted(c["name"] for c in doc["components"]
                                    if c["type"] == "library"),
                             sorted(components))
        return doc


class Sbom(SbomCase):

    def every_layout_and_profile(self, fmt):
        cases = [(FIX.linux, "cuda", LINUX), (FIX.windows, "cuda", WINDOWS),
                 (FIX.linux, "prefix", LINUX), (FIX.windows, "prefix", WINDOWS)]
        n = 0
        for fx, tree, platform in cases:
            for profile in ("full", "dev", "runtime"):
                ws = self.workspace("ws%d" % n, tree=tree, platform=platform)
                n += 1
                self.install(ws, fx, "--profile", profile)
                with self.subTest(fx=fx.filename, tree=tree, profile=profile):
                    self.check_document(ws, fmt, profile)

    def test_spdx_every_layout_and_profile(self):
        self.every_layout_and_profile("spdx")

    def test_cyclonedx_every_layout_and_profile(self):
        self.every_layout_and_profile("cyclonedx")

    def test_the_validation_can_fail(self):
        """A self-test of the validators: planted faults in a real document
        are found, including one only the referenced schemas know (a
        licence id that is no SPDX id, a signature without its algorithm:
        spdx.schema.json and jsf-0.82.schema.json must have resolved)."""
        ws = self.workspace()
        self.install(ws, FIX.linux)
        for fmt in ("cyclonedx", "spdx"):
            self.require_schema(fmt)
            good = json.loads(self.sbom(ws, fmt).out)
            self.assertEqual(validate(good, fmt), [], fmt)
        cdx = json.loads(self.sbom(ws, "cyclonedx").out)
        spdx = json.loads(self.sbom(ws, "spdx").out)

        def planted(doc, change):
            d = json.loads(json.dumps(doc))
            change(d)
            return d

        def c_hash(d):
            d["components"][0]["hashes"][0]["content"] = "not-a-digest"

        def c_licence(d):
            d["metadata"]["component"]["licenses"] = [
                {"license": {"id": "No-Such-Licence-Id"}}]

        def c_signature(d):
            d["signature"] = {"value": "AAAA"}

        def c_type(d):
            d["metadata"]["component"]["type"] = "installer"

        def s_checksum(d):
            d["files"][0]["checksums"][0]["algorithm"] = "SHA257"

        def s_missing(d):
            del d["packages"][0]["downloadLocation"]

        for fmt, doc, change in (("cyclonedx", cdx, c_hash),
                                 ("cyclonedx", cdx, c_licence),
                                 ("cyclonedx", cdx, c_signature),
                                 ("cyclonedx", cdx, c_type),
                                 ("spdx", spdx, s_checksum),
                                 ("spdx", spdx, s_missing)):
            with self.subTest(fmt=fmt, fault=change.__name__):
                self.assertNotEqual(validate(planted(doc, change), fmt), [],
                                    "a planted fault passed the schema")

    def test_optional_component_is_named(self):
        d = self.scratch("zlib")
        z = fleetfix.zlib_zip(os.path.join(d, "ok"))
        m = fleetfix.manifest_with_zlibwapi(FIX.windows,
                                            os.path.join(d, "m.json"), z)
        ws = self.workspace(platform=WINDOWS)
        run_json(install_args(ws, FIX.windows, m)
                 + ["--with", "zlibwapi=" + z.path], expect=0)
        doc = self.check_document(ws, "spdx", components=("zlibwapi",))
        self.assertIn("./bin/zlibwapi.dll",
                      [f["fileName"] for f in doc["files"]])
        self.check_document(ws, "cyclonedx", components=("zlibwapi",))

    def test_output_file_and_json_report(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        out = os.path.join(self.scratch("out"), "bom.json")
        j = run_json(["sbom"] + ws.target_args + ["-o", out], expect=0)
        self.assertEqual(j.doc["output"], out)
        self.assertEqual(j.doc["format"], "cyclonedx")
        self.assertIs(j.doc["changed"], False)
        self.assertEqual(load(out)["bomFormat"], "CycloneDX")
        # stdout holds the report with --json: the document needs -o.
        bad = run_json(["sbom"] + ws.target_args, expect=2)
        self.assertError(bad, 2, "USAGE")

    def test_no_receipt_is_refused(self):
        ws = self.workspace()
        j = run_json(["sbom"] + ws.target_args
                     + ["-o", os.path.join(ws.dir, "x")], expect=3)
        self.assertError(j, 3, "TARGET")
        self.assertFalse(os.path.exists(os.path.join(ws.dir, "x")))

    def test_the_document_follows_the_receipt_not_the_clock(self):
        """Two installs of one archive with one --mtime into fresh trees
        give the same document, byte for byte (the transaction id, which
        only names the tree's backup folder, is not part of it); a tree
        that holds something else gets another serial number."""
        a, b, c = self.workspace("a"), self.workspace("b"), self.workspace("c")
        for ws in (a, b):
            self.install(ws, FIX.linux, "--mtime", str(EPOCH))
        self.install(c, FIX.linux, "--mtime", str(EPOCH), "--profile", "dev")
        for fmt in ("cyclonedx", "spdx"):
            self.assertEqual(self.sbom(a, fmt).out, self.sbom(b, fmt).out, fmt)
        self.assertNotEqual(cddtest.read_receipt(a.tree)["transaction"],
                            cddtest.read_receipt(b.tree)["transaction"])
        da = json.loads(self.sbom(a, "cyclonedx").out)
        dc = json.loads(self.sbom(c, "cyclonedx").out)
        self.assertEqual(da["metadata"]["timestamp"], "2023-11-14T22:13:20Z")
        self.assertNotEqual(da["serialNumber"], dc["serialNumber"])
        sa = json.loads(self.sbom(a, "spdx").out)
        self.assertEqual(sa["creationInfo"]["created"], "2023-11-14T22:13:20Z")
        self.assertIn(da["serialNumber"][len("urn:uuid:"):],
                      sa["documentNamespace"])


class Profiles(SbomCase):

    def roles_in_tree(self, ws, fx):
        rc = cddtest.read_receipt(ws.tree)
        return {f["role"] for f in rc["files"]}, rc

    def test_each_profile_installs_only_its_roles(self):
        for fx, platform in ((FIX.linux, LINUX), (FIX.windows, WINDOWS)):
            full = fx.expected("cuda")
            for profile in ("runtime", "dev", "full"):
                with self.subTest(fx=fx.filename, profile=profile):
                    ws = self.workspace("%s-%s" % (platform, profile),
                                        platform=platform)
                    j = self.install(ws, fx, "--profile", profile)
                    self.assertEqual(j.doc["profile"], profile)
                    roles, rc = self.roles_in_tree(ws, fx)
                    self.assertEqual(rc["profile"], profile)
                    self.assertLessEqual(roles, ROLES_OF[profile])
                    kept = {p for p in full
                            if fx.role(self.src_of(fx, p)) in
                            ROLES_OF[profile]}
                    for p in full:
                        here = os.path.lexists(ws.path(p))
                        self.assertEqual(here, p in kept or
                                         self.link_kept(fx, p, profile),
                                         "%s: %s" % (profile, p))
                    omitted = sum(rc.get("omitted", {}).values())
                    self.assertEqual(omitted, j.doc["omitted"])
                    self.assertEqual(len(rc["files"]) + omitted,
                                     len(fx.files))

    def src_of(self, fx, dest):
        for rel in fx.files:
            if fx.dest(rel) == dest:
                return rel
        raise KeyError(dest)

    def link_kept(self, fx, dest, profile):
        """A symlink stays when the file its chain ends at stays."""
        rel = self.src_of(fx, dest)
        seen = 0
        while fx.role(rel) == "symlink" and seen < 40:
            rel = os.path.join(os.path.dirname(rel), fx.entry(rel).target)
            seen += 1
        return fx.role(rel) in ROLES_OF[profile]

    def test_runtime_keeps_libraries_and_licence_drops_headers(self):
        ws = self.workspace()
        self.install(ws, FIX.linux, "--profile", "runtime")
        self.assertTrue(os.path.isfile(ws.path("lib64/libcudnn.so.8.5.0")))
        self.assertTrue(os.path.islink(ws.path("lib64/libcudnn.so")))
        self.assertFalse(os.path.exists(ws.path("include/cudnn.h")))
        self.assertFalse([n for n in os.listdir(ws.path("lib64"))
                          if n.endswith(".a")])
        rc = cddtest.read_receipt(ws.tree)
        self.assertIn("license", {f["role"] for f in rc["files"]})

    def test_status_and_verify_do_not_call_left_out_files_missing(self):
        ws = self.workspace()
        self.install(ws, FIX.linux, "--profile", "runtime")
        st = run_json(["status"] + ws.target_args + ["--check"], expect=0)
        self.assertEqual(st.doc["profile"], "runtime")
        self.assertGreater(st.doc["omitted"], 0)
        v = run_json(["verify"] + ws.target_args
                     + ["--level", "files", "--manifest",
                        FIX.linux.manifest_path], expect=0)
        checks = {c["name"]: c for c in v.doc["checks"]}
        self.assertEqual(checks["files"]["status"], "pass")
        self.assertIn("left out by design", checks["files.profile"]["detail"])
        self.assertEqual(v.doc["profile"], "runtime")
        # A header deleted by hand from a full install is still missing.
        full = self.workspace("full")
        self.install(full, FIX.linux)
        os.unlink(full.path("include/cudnn.h"))
        run_json(["status"] + full.target_args, expect=1)

    def test_changing_profile_reinstalls_and_removes_what_it_leaves_out(self):
        ws = self.workspace()
        before = ws.snap()
        self.install(ws, FIX.linux)
        j = self.install(ws, FIX.linux, "--profile", "runtime")
        self.assertIs(j.doc["changed"], True)
        plan = plan_of(j.doc)
        self.assertEqual(plan.get("include/cudnn.h"), "remove", plan)
        self.assertFalse(os.path.exists(ws.path("include/cudnn.h")))
        again = self.install(ws, FIX.linux, "--profile", "runtime")
        self.assertIs(again.doc["changed"], False)
        back = self.install(ws, FIX.linux, "--profile", "full")
        self.assertIs(back.doc["changed"], True)
        self.assertTrue(os.path.isfile(ws.path("include/cudnn.h")))
        # Each uninstall undoes one install: full, runtime, full.
        for _ in range(3):
            self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(cddtest.without_state(before),
                            cddtest.without_state(ws.snap()))

    def test_bad_profile_is_a_usage_error(self):
        ws = self.workspace()
        j = run_json(install_args(ws, FIX.linux) + ["--profile", "tiny"],
                     expect=2)
        self.assertError(j, 2, "USAGE")


class Layers(CddTestCase):
    """Two installs of one archive into fresh trees pack into the same tar
    layer (the tree without its state folder: docs/containers.md)."""

    def fresh(self, name):
        ws = self.workspace(name)
        # The base image's own files: identical in both (as two builds
        # FROM one image are).
        for root, dirs, files in os.walk(ws.tree):
            for n in dirs + files:
                os.utime(os.path.join(root, n), (EPOCH - 5, EPOCH - 5),
                         follow_symlinks=False)
        os.utime(ws.tree, (EPOCH - 5, EPOCH - 5))
        return ws

    def layer(self, ws, out):
        subprocess.run(["tar", "--sort=name", "--owner=0", "--group=0",
                        "--numeric-owner", "--exclude=./.cudnn-deploy",
                        "-cf", out, "-C", ws.tree, "."], check=True)
        with open(out, "rb") as f:
            return f.read()

    def build_two(self, extra=(), env=None, profile="runtime"):
        trees = []
        for i, name in enumerate(("one", "two")):
            ws = self.fresh(name)
            run_json(install_args(ws, FIX.linux) + ["--profile", profile]
                     + list(extra), env=env, expect=0)
            trees.append(ws)
        d = self.scratch("layers")
        return [self.layer(ws, os.path.join(d, "%d.tar" % i))
                for i, ws in enumerate(trees)], trees

    def test_mtime_gives_identical_layers(self):
        if not shutil.which("tar"):
            self.skipTest("no tar")
        (a, b), trees = self.build_two(["--mtime", str(EPOCH)])
        self.assertEqual(hashlib.sha256(a).hexdigest(),
                         hashlib.sha256(b).hexdigest(),
                         "the two layers differ")
        st = os.lstat(trees[0].path("lib64/libcudnn.so.8.5.0"))
        self.assertEqual(int(st.st_mtime), EPOCH)
        st = os.lstat(trees[0].path("lib64/libcudnn.so"))
        self.assertEqual(int(st.st_mtime), EPOCH)
        self.assertEqual(int(os.lstat(trees[0].path("lib64")).st_mtime),
                         EPOCH)
        self.assertEqual(int(os.lstat(trees[0].tree).st_mtime), EPOCH)
        # The re-install sees the tree as it left it: nothing to do.
        again = run_json(install_args(trees[0], FIX.linux)
                         + ["--profile", "runtime", "--mtime", str(EPOCH)],
                         expect=0)
        self.assertIs(again.doc["changed"], False)

    def test_source_date_epoch_does_the_same(self):
        (a, b), trees = self.build_two(env={"SOURCE_DATE_EPOCH": str(EPOCH)},
                                       profile="full")
        self.assertEqual(a, b)
        self.assertEqual(int(os.lstat(trees[1].path(
            "include/cudnn.h")).st_mtime), EPOCH)
        rc = cddtest.read_receipt(trees[1].tree)
        self.assertEqual(rc["installed_at"], "2023-11-14T22:13:20Z")

    def test_bad_source_date_epoch_is_refused(self):
        ws = self.workspace()
        before = ws.snap()
        j = run_json(install_args(ws, FIX.linux),
                     env={"SOURCE_DATE_EPOCH": "yesterday"}, expect=2)
        self.assertError(j, 2, "USAGE")
        self.assertSameTree(before, ws.snap())


def layers_of(checks):
    """What the verify record must say, from a verify's JSON checks: per
    layer (the name up to its first '.' or ' ') the counts and the worst
    outcome."""
    out = {}
    for c in checks:
        name = c["name"].replace(" ", ".").split(".")[0]
        if name not in ("files", "load", "gpu", "bench"):
            continue
        l = out.setdefault(name, {"pass": 0, "warn": 0, "fail": 0, "skip": 0})
        l[c["status"]] += 1
    for l in out.values():
        l["outcome"] = ("fail" if l["fail"] else "warn" if l["warn"]
                        else "pass" if l["pass"] else "skip")
    return out


class VerifyRecord(SbomCase):
    """The verify result in the SBOM: install's closing verify and verify
    write .cudnn-deploy/verified.json under the lock; sbom states it only
    while it names the current receipt; a damaged record is named and left
    out; it is never believed by verify itself."""

    def record_path(self, ws):
        return ws.path(cddtest.VERIFIED)

    def install_verified(self, ws, *extra):
        """install with its closing verify (the look-alike libraries do not
        all load here: exit 1 is a verify that ran and found so)."""
        args = [a for a in install_args(ws, FIX.linux) if a != "--no-verify"]
        return run_json(args + list(extra), expect=(0, 1))

    def record(self, ws):
        return load(self.record_path(ws))

    def cdx_verify(self, ws):
        doc = json.loads(self.sbom(ws, "cyclonedx").out)
        props = {p["name"]: p["value"]
                 for p in doc["metadata"]["component"]["properties"]}
        return {k[len("cudnn-deploy:verify."):]: v for k, v in props.items()
                if k.startswith("cudnn-deploy:verify")}, doc

    def spdx_comment(self, ws):
        doc = json.loads(self.sbom(ws, "spdx").out)
        return doc["packages"][0]["comment"], doc

    def test_install_records_its_verify_and_sbom_states_it(self):
        ws = self.workspace()
        j = self.install_verified(ws)
        self.assertIs(j.doc["verify_recorded"], True, j.doc)
        rec = self.record(ws)
        want = layers_of(j.doc["checks"])
        self.assertEqual(rec["level"], j.doc["level"])
        self.assertEqual(rec["tool_version"],
                         cddtest.read_receipt(ws.tree)["tool_version"])
        self.assertRegex(rec["receipt_sha256"], "^[0-9a-f]{64}$")
        self.assertRegex(rec["verified_at"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        got = {l["name"]: l for l in rec["layers"]}
        self.assertEqual(sorted(got), sorted(want))
        for name, l in want.items():
            self.assertEqual((got[name]["outcome"], got[name]["passed"],
                              got[name]["warnings"], got[name]["failed"],
                              got[name]["skipped"]),
                             (l["outcome"], l["pass"], l["warn"], l["fail"],
                              l["skip"]), name)
        worst = [l["outcome"] for l in want.values()]
        self.assertEqual(rec["outcome"], "fail" if "fail" in worst else
                         "warn" if "warn" in worst else "pass")
        props, _ = self.cdx_verify(ws)
        self.assertEqual(props["outcome"], rec["outcome"])
        self.assertEqual(props["level"], rec["level"])
        self.assertEqual(props["receipt_sha256"], rec["receipt_sha256"])
        self.assertTrue(props["files"].startswith(got["files"]["outcome"]
                                                  + ": "), props)
        self.assertNotIn("time", " ".join(props))  # the document stays
        comment, _ = self.spdx_comment(ws)          # reproducible
        self.assertIn("verified by cudnn-deploy %s (level %s"
                      % (rec["tool_version"], rec["level"]), comment)
        # status --json carries it too (the Ansible cudnn_facts reads it).
        st = run_json(["status"] + ws.target_args, expect=0)
        self.assertEqual(st.doc["verified"], rec)
        # Both still valid, and still the same bytes run after run.
        self.check_document(ws, "cyclonedx")
        self.check_document(ws, "spdx")

    def test_the_record_follows_the_receipt(self):
        ws = self.workspace()
        self.install(ws, FIX.linux, "--no-verify")
        self.assertFalse(os.path.exists(self.record_path(ws)))
        self.assertEqual(self.cdx_verify(ws)[0], {})
        self.assertNotIn("verif", self.spdx_comment(ws)[0])
        v = run_json(["verify"] + ws.target_args, expect=(0, 1))
        self.assertIs(v.doc["verify_recorded"], True, v.doc)
        self.assertEqual(self.cdx_verify(ws)[0]["outcome"],
                         self.record(ws)["outcome"])
        # Another receipt (a profile change): the record describes the old
        # one, so the SBOM says nothing of verification.
        self.install(ws, FIX.linux, "--profile", "runtime", "--no-verify")
        self.assertTrue(os.path.exists(self.record_path(ws)))
        self.assertEqual(self.cdx_verify(ws)[0], {})
        self.assertNotIn("verified", run_json(["status"] + ws.target_args,
                                              expect=0).doc)
        self.assertNotIn("verif", self.spdx_comment(ws)[0])
        # uninstall takes the record with it (and, here, the whole
        # state folder once the first install is undone too).
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertFalse(os.path.exists(self.record_path(ws)))
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertFalse(os.path.lexists(ws.path(cddtest.STATE)))

    def test_a_damaged_record_is_named_and_left_out(self):
        ws = self.workspace()
        self.install_verified(ws)
        good = self.record(ws)
        elsewhere = os.path.join(self.scratch("x"), "verified.json")
        with open(elsewhere, "w") as f:
            json.dump(good, f)
        cases = [
            ("not json", b"{\"outcome\": ", "not a JSON object"),
            ("too big", b" " * (65 << 10) + json.dumps(good).encode(), ""),
            ("a word we never write",
             json.dumps(dict(good, outcome="certified")).encode(),
             "outcome"),
            ("a bad layer", json.dumps(dict(good, layers=[
                {"name": "files", "outcome": "pass", "passed": -1,
                 "warnings": 0, "failed": 0, "skipped": 0}])).encode(),
             "layers[0]"),
            ("a control character",
             json.dumps(dict(good, tool_version="1.0\x1b[2J")).encode(),
             "tool_version"),
            ("a link", None, "link"),
        ]
        for name, text, words in cases:
            with self.subTest(name):
                p = self.record_path(ws)
                os.unlink(p)
                if text is None:
                    os.symlink(elsewhere, p)
                else:
                    with open(p, "wb") as f:
                        f.write(text)
                r = self.sbom(ws, "cyclonedx")
                self.assertIn("verify record is left out", r.err)
                self.assertIn("verified.json", r.err)
                self.assertIn(words, r.err)
                props = {p["name"] for p in json.loads(r.out)["metadata"][
                    "component"]["properties"]}
                self.assertFalse([p for p in props if "verify" in p], props)
                self.assertEqual(validate(json.loads(r.out), "cyclonedx"),
                                 [])

    def test_verify_never_believes_a_record(self):
        """A planted record that says pass, with the right receipt digest,
        changes nothing verify finds: a changed file still fails (and the
        next verify overwrites the record with the truth)."""
        ws = self.workspace()
        self.install_verified(ws)
        rec = self.record(ws)
        lie = dict(rec, outcome="pass", layers=[
            dict(l, outcome="pass", failed=0) for l in rec["layers"]])
        with open(self.record_path(ws), "w") as f:
            json.dump(lie, f)
        with open(ws.path("include/cudnn.h"), "ab") as f:
            f.write(b"/* changed */\n")
        v = run_json(["verify"] + ws.target_args + ["--level", "files"],
                     expect=1)
        checks = {c["name"]: c["status"] for c in v.doc["checks"]}
        self.assertEqual(checks["files"], "fail")
        self.assertEqual(self.record(ws)["outcome"], "fail")
        self.assertEqual(self.cdx_verify(ws)[0]["outcome"], "fail")

    def test_verify_with_the_lock_held_records_nothing(self):
        ws = self.workspace()
        self.install(ws, FIX.linux, "--no-verify")
        with cddtest.LockHolder(ws.tree):
            v = run_json(["verify"] + ws.target_args, expect=(0, 1))
        self.assertIs(v.doc["verify_recorded"], False)
        self.assertIn("lock", v.doc["verify_not_recorded"])
        self.assertFalse(os.path.exists(self.record_path(ws)))
        v = run_json(["verify"] + ws.target_args, expect=(0, 1))
        self.assertIs(v.doc["verify_recorded"], True)


if __name__ == "__main__":
    cddtest.main()
