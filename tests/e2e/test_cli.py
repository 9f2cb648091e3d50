"""The command-line contract: the help text and man page, the --json
envelope, --quiet, malformed manifests (exit 3, naming the file and the JSON
path of the fault), and the shipped-manifest commands. Help, version and
usage errors (exit 2) are tables in tests/cli/ (help.t, usage.t)."""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import FIX, CddTestCase, install_args, run, run_json  # noqa: E402

SHIPPED = ("cudnn-8.5.0.96-cuda11-linux-x86_64",
           "cudnn-8.5.0.96-cuda11-windows-x86_64",
           "cudnn-8.9.7.29-cuda11-linux-x86_64",
           "cudnn-8.9.7.29-cuda11-windows-x86_64",
           "cudnn-8.9.7.29-cuda12-linux-x86_64",
           "cudnn-8.9.7.29-cuda12-windows-x86_64",
           "cudnn-9.14.0.64-cuda13-linux-x86_64")
LINUX_ARCHIVE_SHA = "5454a6fd94f008728caae9adad993c4e85ef36302e26bce43bea7d458a5e7b6d"
WINDOWS_ARCHIVE_SHA = "bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b"


def find_manifests(doc):
    """Every dict inside doc that looks like a manifest."""
    found = []
    if isinstance(doc, dict):
        if doc.get("schema_version") == 1 and "files" in doc and "archive" in doc:
            found.append(doc)
        for v in doc.values():
            found += find_manifests(v)
    elif isinstance(doc, list):
        for v in doc:
            found += find_manifests(v)
    return found


SRC_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def env_vars_read_by_the_sources():
    """Every variable name src/ reads: cdd_getenv("X") / getenv("X") and the
    X_ENV "X" defines those calls take."""
    found = set()
    pat = re.compile(r'(?:cdd_getenv|getenv)\("([A-Za-z_][A-Za-z0-9_]*)"\)'
                     r'|#define [A-Z_]*_ENV "([A-Za-z_][A-Za-z0-9_]*)"')
    for top, _dirs, files in os.walk(os.path.join(SRC_ROOT, "src")):
        for name in files:
            if name.endswith((".c", ".h")):
                with open(os.path.join(top, name), encoding="utf-8") as f:
                    for m in pat.finditer(f.read()):
                        found.add(m.group(1) or m.group(2))
    for inc in ("obtain.h",):
        with open(os.path.join(SRC_ROOT, "include", "cdd", inc)) as f:
            for m in pat.finditer(f.read()):
                found.add(m.group(1) or m.group(2))
    return found


class HelpText(CddTestCase):
    """The help and the man page, written from the error table."""

    def exit_lines(self, text):
        part = text.split("Exit codes:", 1)[1]
        return part

    def test_exit_codes_do_not_run_together(self):
        for args in (["--help"], ["help", "install"], ["install", "--help"]):
            with self.subTest(args=args):
                r = run(args, expect=0)
                part = self.exit_lines(r.out)
                # "usage error: not supported" read as one message.
                self.assertNotIn("usage error:", part)
                self.assertRegex(part, r"\n  2  usage error, or not supported\n")
                self.assertIn("  3  rejected input: invalid manifest,", part)

    def test_release_help_lists_no_test_only_rows(self):
        if os.environ.get("CDD_FAULT_BUILD") == "ON":
            # The test build can exit so: its help says it.
            self.assertIn("injected fault", self.exit_lines(
                run(["--help"], expect=0).out))
        release = os.environ.get("CDD_RELEASE_BIN")
        if not release:
            self.skipTest("CDD_RELEASE_BIN is not set (make test sets it)")
        for args in (["--help"], ["help", "install"]):
            p = subprocess.run([release] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(p.returncode, 0)
            text = p.stdout.decode()
            self.assertIn("Exit codes:", text)
            self.assertNotIn("injected fault", text)

    def test_man_page_sections(self):
        with open(os.path.join(SRC_ROOT, "docs", "cudnn-deploy.1")) as f:
            page = f.read()
        for sec in ("EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES",
                    "SEE ALSO"):
            self.assertIn("\n.SH %s\n" % sec, page)
        self.assertNotIn("injected fault", page)
        self.assertNotIn("FAULT", page.split(".SH EXIT STATUS", 1)[1]
                         .split(".SH ENVIRONMENT", 1)[0])
        self.assertIn("/usr/share/doc/cudnn\\-deploy/", page)
        self.assertIn("receipt.json", page)
        self.assertIn("install \\-\\-cuda v11.6", page)
        # Every variable the tool reads, by its name (roff escapes '-' only).
        env = page.split(".SH ENVIRONMENT", 1)[1].split(".SH FILES", 1)[0]
        names = env_vars_read_by_the_sources()
        self.assertIn("CUDNN_DEPLOY_MIRROR", names)
        self.assertIn("LD_LIBRARY_PATH", names)
        for var in sorted(names):
            with self.subTest(var=var):
                self.assertIn(var, env)


class JsonAndQuiet(CddTestCase):

    def test_json_success(self):
        ws = self.workspace()
        j = self.install(ws, FIX.linux)
        self.assertEqual(j.doc["command"], "install")
        self.assertIs(j.doc["changed"], True)
        self.assertEqual(os.path.realpath(j.doc["target"]), os.path.realpath(ws.tree))
        self.assertNotIn("error", j.doc)
        self.assertTrue(j.doc["plan"])
        for item in j.doc["plan"]:
            self.assertIn(item["action"], ("new", "replace", "unchanged", "remove"))
            self.assertIn(item["role"], cddtest.ROLES)
            self.assertFalse(os.path.isabs(item["path"]))

    def test_json_option_after_command(self):
        ws = self.workspace()
        r = run(install_args(ws, FIX.linux) + ["--json"], expect=0)
        doc = cddtest.parse_one_object(r.out)
        self.assertEqual(cddtest.check_envelope(doc, 0), [])
        j = run(["status", "--json"] + ws.target_args, expect=0)
        self.assertEqual(cddtest.parse_one_object(j.out)["command"], "status")

    def test_json_failure(self):
        ws = self.workspace(version="12.1.1")
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux, expect=3)
        err = self.assertError(j, 3, "VERSION")
        self.assertIn("12.1", err["message"])
        self.assertIn("11", err["message"])
        self.assertSameTree(before, ws.snap(cddtest.IGNORE_LOCK))

    def test_json_status_nothing_installed(self):
        ws = self.workspace()
        j = self.cdd_json("status", *ws.target_args, expect=0)
        self.assertIs(j.doc["installed"], False)
        self.assertIs(j.doc["changed"], False)

    def test_human_text_goes_to_stderr(self):
        ws = self.workspace()
        r = run(install_args(ws, FIX.linux), expect=0)
        self.assertEqual(r.out, "")
        self.assertTrue(r.err.strip())
        r = run(["status"] + ws.target_args, expect=0)
        self.assertTrue((r.out + r.err).strip())

    def test_quiet_success_prints_nothing(self):
        ws = self.workspace()
        r = run(["--quiet"] + install_args(ws, FIX.linux), expect=0)
        self.assertEqual((r.out, r.err), ("", ""))
        r = run(["status", "--quiet"] + ws.target_args, expect=0)
        self.assertEqual((r.out, r.err), ("", ""))
        r = run(["--quiet", "uninstall"] + ws.target_args, expect=0)
        self.assertEqual((r.out, r.err), ("", ""))

    def test_quiet_failure_still_explains(self):
        ws = self.workspace(version="12.1.1")
        r = run(["--quiet"] + install_args(ws, FIX.linux), expect=3)
        self.assertEqual(r.out, "")
        self.assertIn("12.1", r.err)


def _sym(doc):
    return [i for i, f in enumerate(doc["files"]) if f["role"] == "symlink"][0]


# name -> (edit(doc) or raw text, what must appear in the message)
BAD_MANIFESTS = [
    ("sha256_not_hex", lambda d: d["files"][3].update(sha256="xyz"), "files[3].sha256"),
    ("sha256_63_digits", lambda d: d["files"][0].update(sha256="a" * 63), "files[0].sha256"),
    ("sha256_non_hex_64", lambda d: d["files"][5].update(sha256="g" * 64), "files[5].sha256"),
    ("unknown_top_key", lambda d: d.update(extra=1), "extra"),
    ("unknown_file_key", lambda d: d["files"][2].update(mode=493), "files[2]"),
    ("unknown_archive_key", lambda d: d["archive"].update(md5="0" * 32), "archive"),
    ("missing_product", lambda d: d.pop("product"), "product"),
    ("wrong_product", lambda d: d.update(product="tensorrt"), "product"),
    ("key_case", lambda d: d.update(Product=d.pop("product")), "roduct"),
    ("schema_version_2", lambda d: d.update(schema_version=2), "schema_version"),
    ("cuda_major_string", lambda d: d.update(cuda_major="11"), "cuda_major"),
    ("unknown_platform", lambda d: d.update(platform="macos-arm64"), "platform"),
    ("unknown_role", lambda d: d["files"][1].update(role="plugin"), "files[1].role"),
    ("negative_size", lambda d: d["archive"].update(size=-1), "archive.size"),
    ("size_2_53", lambda d: d["archive"].update(size=2 ** 53), "archive.size"),
    ("fractional_size", lambda d: d["files"][4].update(size=12.5), "files[4].size"),
    ("size_as_string", lambda d: d["files"][4].update(size="12"), "files[4].size"),
    ("duplicate_path", lambda d: d["files"][6].update(path=d["files"][5]["path"]), "files[6]"),
    ("unsafe_path", lambda d: d["files"][2].update(path="../evil.h"), "files[2].path"),
    ("absolute_path", lambda d: d["files"][2].update(path="/etc/evil.h"), "files[2].path"),
    ("symlink_without_target",
     lambda d: d["files"][_sym(d)].pop("target"), "files[%d]"),
    ("symlink_target_with_slash",
     lambda d: d["files"][_sym(d)].update(target="../lib/x.so"), "files[%d].target"),
    ("strip_components_string", lambda d: d["archive"].update(strip_components="1"),
     "archive.strip_components"),
    ("files_exact_string", lambda d: d.update(files_exact="yes"), "files_exact"),
    ("files_not_list", lambda d: d.update(files={}), "files"),
    ("url_not_string", lambda d: d["archive"].update(url=[5]), "archive.url"),
    ("verify_number_string", lambda d: d["verify"].update(version_number="8500"),
     "verify.version_number"),
    ("verify_sublib_unknown_key",
     lambda d: d["verify"]["sublibraries"][0].update(extra=True), "verify.sublibraries[0]"),
    ("not_json", "{\"schema_version\": 1,", None),
    ("top_level_array", "[]", None),
    ("empty_file", "", None),
]


class MalformedManifests(CddTestCase):
    """Exit 3, error MANIFEST, the message names the file and the JSON path;
    nothing written."""

    def test_malformed(self):
        ws = self.workspace()
        folder = self.scratch("manifests")
        before = ws.snap(ignore=())
        self.assertGreaterEqual(len(BAD_MANIFESTS), 5)
        for name, edit, where in BAD_MANIFESTS:
            with self.subTest(case=name):
                path = os.path.join(folder, "bad-%s.json" % name)
                if isinstance(edit, str):
                    with open(path, "w") as f:
                        f.write(edit)
                else:
                    doc = json.loads(json.dumps(FIX.linux.manifest))
                    edit(doc)
                    if where and "%d" in where:
                        where = where % _sym(FIX.linux.manifest)
                    cddtest.write_json(path, doc)
                j = self.install(ws, FIX.linux, manifest=path, expect=None)
                err = self.assertError(j, 3, "MANIFEST", name)
                text = j.err + err.get("message", "")
                self.assertIn("bad-%s.json" % name, text, "the file is not named")
                if where:
                    self.assertIn(where, text, "the JSON path is not named")
                self.assertSameTree(before, ws.snap(cddtest.IGNORE_LOCK))

    def test_manifest_file_missing(self):
        ws = self.workspace()
        j = self.install(ws, FIX.linux, manifest=os.path.join(ws.dir, "nope.json"),
                         expect=None)
        self.assertIn(j.rc, (2, 3, 4))
        self.assertIn("nope", j.err)


class ShippedManifests(CddTestCase):

    def test_list(self):
        r = run(["manifest", "list"], expect=0)
        for name in SHIPPED:
            self.assertIn(name, r.out + r.err)
        j = run_json(["manifest", "list"], expect=0)
        for name in SHIPPED:
            self.assertIn(name, json.dumps(j.doc))

    def test_show_linux(self):
        for name in (SHIPPED[0], SHIPPED[0] + ".json"):
            with self.subTest(name=name):
                j = run_json(["manifest", "show", name], expect=0)
                ms = find_manifests(j.doc)
                self.assertEqual(len(ms), 1, "one manifest in the answer")
                m = ms[0]
                self.assertEqual(m["product"], "cudnn")
                self.assertEqual(m["version"], "8.5.0.96")
                self.assertEqual(m["platform"], "linux-x86_64")
                self.assertEqual(m["cuda_major"], 11)
                self.assertEqual(m["archive"]["sha256"], LINUX_ARCHIVE_SHA)
                paths = {f["path"]: f for f in m["files"]}
                self.assertEqual(paths["lib/libcudnn.so.8"]["role"], "symlink")
                self.assertEqual(paths["lib/libcudnn.so.8"]["target"], "libcudnn.so.8.5.0")
        r = run(["manifest", "show", SHIPPED[0]], expect=0)
        self.assertIn(LINUX_ARCHIVE_SHA, r.out + r.err)

    def test_show_windows_pinned_never_invents_entry_hashes(self):
        j = run_json(["manifest", "show", SHIPPED[1]], expect=0)
        m = find_manifests(j.doc)[0]
        self.assertEqual(m["platform"], "windows-x86_64")
        self.assertEqual(m["archive"]["filename"],
                         "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip")
        paths = {f["path"] for f in m["files"]}
        self.assertEqual(len([p for p in paths if p.startswith("bin/")]), 7)
        self.assertEqual(len([p for p in paths if p.startswith("lib/x64/")]), 14)
        self.assertEqual(len([p for p in paths if p.startswith("include/")]), 9)
        # The archive's pin is NVIDIA's (redistrib_8.5.0.96.json); the
        # entries' hashes nobody published, so they are not made up.
        self.assertEqual(m["archive"]["sha256"], WINDOWS_ARCHIVE_SHA)
        self.assertEqual(m["archive"]["size"], 542516637)
        self.assertTrue(all(f["sha256"] is None for f in m["files"]))

    def test_shipped_manifest_by_name_rejects_fake_archive(self):
        # The shipped Linux manifest pins NVIDIA's real tarball; ours differs.
        ws = self.workspace()
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux, manifest=SHIPPED[0], expect=None)
        self.assertError(j, 3, "CHECKSUM")
        # Its pinned size tells at once (before a byte is hashed).
        self.assertIn("692647752", j.doc["error"]["message"])
        self.assertIn("wrong file", j.doc["error"]["message"])
        self.assertSameTree(before, ws.snap(cddtest.IGNORE_LOCK))

    def test_create_to_stdout(self):
        r = run(["manifest", "create", FIX.linux.path, "--version", "8.5.0.96",
                 "--cuda-major", "11"], expect=0)
        doc = cddtest.parse_one_object(r.out)
        self.assertEqual(doc["schema_version"], 1)
        self.assertEqual(doc["archive"]["sha256"], FIX.linux.sha256)


if __name__ == "__main__":
    cddtest.main()
