"""Fleet features on generated archives: the zlibwapi optional component
(install --with, machine check, receipt, uninstall), offline bundles served
by a static HTTP server, file:// and through a loopback proxy."""

import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fleetfix  # noqa: E402
import httpfault  # noqa: E402
import proxyserver  # noqa: E402
from cddtest import (FIX, IGNORE_LOCK, WINDOWS, CddTestCase,  # noqa: E402
                     install_args, plan_of, run, run_json)

ZLIB_DEST = "bin/zlibwapi.dll"


class Zlibwapi(CddTestCase):
    """install --with zlibwapi on a Windows-layout tree."""

    def setUp(self):
        self.dir = self.scratch("zlib")
        self.z = fleetfix.zlib_zip(os.path.join(self.dir, "ok"))
        self.m = fleetfix.manifest_with_zlibwapi(
            FIX.windows, os.path.join(self.dir, "m.json"), self.z)

    def install(self, ws, *extra, **kw):
        return run_json(install_args(ws, FIX.windows, self.m) + list(extra),
                        **kw)

    def test_with_file_lands_in_bin_and_receipt_and_uninstall_removes(self):
        ws = self.workspace(platform=WINDOWS)
        res = self.install(ws, "--with", "zlibwapi=" + self.z.path, expect=0)
        self.assertTrue(res.doc["changed"])
        plan = plan_of(res.doc)
        self.assertEqual(plan.get(ZLIB_DEST), "new", plan)
        with open(os.path.join(ws.tree, ZLIB_DEST), "rb") as f:
            self.assertEqual(f.read(), self.z.dll)
        rc = cddtest.read_receipt(ws.tree)
        self.assertIn(ZLIB_DEST, [f["path"] for f in rc["files"]])
        self.assertEqual(rc["components"][0]["name"], "zlibwapi")
        self.assertEqual(rc["components"][0]["sha256"], self.z.sha256)
        # Nothing of the zip's other members lands anywhere.
        for p in ("bin/zlibwapi.lib", "lib/x64/zlibwapi.lib",
                  "lib/x64/zlibstat.lib", "readme.txt"):
            self.assertFalse(os.path.lexists(os.path.join(ws.tree, p)), p)
        # Again: unchanged, through the fast path.
        again = self.install(ws, "--with", "zlibwapi=" + self.z.path,
                             expect=0)
        self.assertFalse(again.doc["changed"])
        # Without --with: the component's file goes, as any file of ours.
        less = self.install(ws, expect=0)
        self.assertTrue(less.doc["changed"])
        self.assertEqual(plan_of(less.doc).get(ZLIB_DEST), "remove")
        self.assertFalse(os.path.lexists(os.path.join(ws.tree, ZLIB_DEST)))
        # Uninstall undoes the last install: the tree as it was before.
        ws2 = self.workspace("ws2", platform=WINDOWS)
        before = ws2.snap()
        self.install(ws2, "--with", "zlibwapi=" + self.z.path, expect=0)
        un = run_json(["uninstall"] + ws2.target_args, expect=0)
        self.assertEqual(plan_of(un.doc).get(ZLIB_DEST), "remove")
        self.assertEqual(cddtest.without_state(ws2.snap()),
                         cddtest.without_state(before))

    def test_with_from_the_cache_by_its_pin(self):
        ws = self.workspace(platform=WINDOWS)
        cache = os.path.join(self.dir, "cache")
        d = os.path.join(cache, self.z.sha256)
        os.makedirs(d)
        shutil.copy(self.z.path, os.path.join(d, fleetfix.ZLIB_ZIP))
        self.install(ws, "--with", "zlibwapi", "--cache-dir", cache, expect=0)
        self.assertTrue(os.path.isfile(os.path.join(ws.tree, ZLIB_DEST)))

    def test_32bit_dll_refused_error_193_explained_tree_unchanged(self):
        ws = self.workspace(platform=WINDOWS)
        z32 = fleetfix.zlib_zip(os.path.join(self.dir, "x86"),
                                machine=fleetfix.I386)
        m32 = fleetfix.manifest_with_zlibwapi(
            FIX.windows, os.path.join(self.dir, "m32.json"), z32)
        before = ws.snap()
        res = run_json(install_args(ws, FIX.windows, m32) +
                       ["--with", "zlibwapi=" + z32.path], expect=3)
        msg = res.doc["error"]["message"]
        self.assertIn("x86 (32-bit)", msg)
        self.assertIn("error 193", msg)
        self.assertEqual(ws.snap(), before)
        self.assertEqual(cddtest.leftovers(ws.tree), [])

    def test_wrong_archive_refused_by_the_pin(self):
        ws = self.workspace(platform=WINDOWS)
        other = fleetfix.zlib_zip(os.path.join(self.dir, "x86"),
                                  machine=fleetfix.I386)
        before = ws.snap()
        res = self.install(ws, "--with", "zlibwapi=" + other.path, expect=3)
        self.assertEqual(res.doc["error"]["code"], "CHECKSUM")
        self.assertIn("component zlibwapi", res.doc["error"]["message"])
        self.assertEqual(ws.snap(), before)

    def test_unknown_component_is_a_usage_error(self):
        ws = self.workspace(platform=WINDOWS)
        res = self.install(ws, "--with", "cublas", expect=2)
        self.assertIn("declares: zlibwapi", res.doc["error"]["message"])

    def test_dry_run_plans_it_and_changes_nothing(self):
        ws = self.workspace(platform=WINDOWS)
        before = ws.snap()
        res = self.install(ws, "--dry-run", "--with",
                           "zlibwapi=" + self.z.path, expect=0)
        self.assertEqual(plan_of(res.doc).get(ZLIB_DEST), "new")
        self.assertEqual(ws.snap(), before)

    def test_manifest_schema_checks(self):
        bad = []
        def variant(name, edit):
            with open(self.m) as f:
                doc = json.load(f)
            edit(doc["components"][0])
            p = os.path.join(self.dir, name + ".json")
            cddtest.write_json(p, doc)
            bad.append((name, p))
        variant("unpinned", lambda c: c["archive"].update(sha256=None))
        variant("range", lambda c: c.update(cudnn_min="8.6"))
        variant("cuda", lambda c: c.update(cuda_majors=[12]))
        variant("unsafe", lambda c: c["entry"].update(path="../zlibwapi.dll"))
        variant("clash", lambda c: c["entry"].update(path="x/cudnn64_8.dll"))
        variant("key", lambda c: c.update(extra=1))
        want = {"unpinned": "components[0].archive.sha256",
                "range": "applies to cuDNN 8.6 to 9.1",
                "cuda": "components[0].cuda_majors",
                "unsafe": "components[0].entry.path",
                "clash": "the archive itself ships",
                "key": "unknown key \"extra\""}
        for name, p in bad:
            res = run_json(["manifest", "show", p], expect=3)
            self.assertIn(want[name], res.doc["error"]["message"], name)
        # A good one shows back (and parses again) with its component.
        res = run(["manifest", "show", self.m], expect=0)
        self.assertEqual(json.loads(res.out)["components"][0]["name"],
                         "zlibwapi")

    def test_linux_component_elf_machine_checked(self):
        """The machine check on ELF: x86-64 lands in lib64, AArch64 is
        refused with the tree unchanged."""
        import struct

        def elf(machine):
            head = bytearray(64)
            head[0:4] = b"\x7fELF"
            head[4], head[5], head[6] = 2, 1, 1          # 64-bit, LE, v1
            struct.pack_into("<H", head, 18, machine)
            return bytes(head) + cddtest.synth_bytes("elf", 2000)

        for machine, expect in ((62, 0), (183, 3)):
            d = os.path.join(self.dir, "elf%d" % machine)
            z = fleetfix.ZlibZip(d, name="libz-test.zip", dll=elf(machine))
            c = fleetfix.component(z)
            c["entry"]["path"] = fleetfix.ENTRY     # any name: no layout rule
            doc = json.loads(json.dumps(FIX.linux.manifest))
            doc["components"] = [c]
            m = cddtest.write_json(os.path.join(d, "m.json"), doc)
            ws = self.workspace("ws%d" % machine)
            before = ws.snap()
            res = run_json(install_args(ws, FIX.linux, m) +
                           ["--with", "zlibwapi=" + z.path], expect=expect)
            if expect == 0:
                self.assertEqual(plan_of(res.doc).get("lib64/zlibwapi.dll"),
                                 "new")
            else:
                self.assertIn("e_machine 183", res.doc["error"]["message"])
                self.assertEqual(ws.snap(), before)

    def test_shipped_windows_manifest_declares_the_real_pin(self):
        res = run(["manifest", "show",
                   "cudnn-8.5.0.96-cuda11-windows-x86_64"], expect=0)
        c = json.loads(res.out)["components"][0]
        self.assertEqual(c["name"], "zlibwapi")
        self.assertEqual(c["archive"]["filename"], "zlib123dllx64.zip")
        self.assertEqual(c["archive"]["sha256"], "fd324c6923aa4f45a60413665e"
                         "0b68bb34a7779d0861849e02d2711ff8efb9a4")
        self.assertEqual(c["entry"]["path"], "dll_x64/zlibwapi.dll")


class Bundle(CddTestCase):
    """bundle -o DIR, then installs served from DIR by HTTP, file:// and
    through a proxy."""

    @classmethod
    def setUpClass(cls):
        super(Bundle, cls).setUpClass()

    def setUp(self):
        self.dir = self.scratch("bundle")
        self.z = fleetfix.zlib_zip(os.path.join(self.dir, "z"))
        self.m = fleetfix.manifest_with_zlibwapi(
            FIX.windows, os.path.join(self.dir, "cudnn-test-windows.json"),
            self.z)
        self.out = os.path.join(self.dir, "out")
        self.cache = os.path.join(self.dir, "cache")

    def bundle(self, *extra, **kw):
        return run_json(["bundle", "--manifest", self.m, "--manifest",
                         FIX.linux.manifest_path, "-o", self.out,
                         "--archive", FIX.windows.path, "--archive",
                         FIX.linux.path, "--archive", self.z.path,
                         "--cache-dir", self.cache] + list(extra), **kw)

    def test_layout_and_pins(self):
        res = self.bundle(expect=0)
        win = os.path.join(self.out, "cudnn/redist/cudnn/windows-x86_64",
                           FIX.windows.filename)
        lin = os.path.join(self.out, "cudnn/redist/cudnn/linux-x86_64",
                           FIX.linux.filename)
        comp = os.path.join(self.out, "cudnn-deploy/components",
                            self.z.sha256, fleetfix.ZLIB_ZIP)
        for p, sha in ((win, FIX.windows.sha256), (lin, FIX.linux.sha256),
                       (comp, self.z.sha256)):
            self.assertEqual(cddtest.sha256_file(p), sha, p)
        red = json.load(open(os.path.join(
            self.out, "cudnn/redist/redistrib_8.5.0.96.json")))
        ent = red["cudnn"]["windows-x86_64"]["cuda11"]
        self.assertEqual(ent["sha256"], FIX.windows.sha256)
        self.assertEqual(ent["size"], str(FIX.windows.size))
        self.assertEqual(red["cudnn"]["linux-x86_64"]["cuda11"]
                         ["relative_path"],
                         "cudnn/linux-x86_64/" + FIX.linux.filename)
        man = json.load(open(os.path.join(
            self.out, "cudnn-deploy/manifests/cudnn-test-windows.json")))
        self.assertEqual(man["archive"]["sha256"], FIX.windows.sha256)
        self.assertTrue(man["archive"]["url"][0].startswith(
            "https://developer.download.nvidia.com/compute/cudnn/redist/"))
        self.assertIn("cudnn-deploy/components/",
                      man["components"][0]["archive"]["url"][0])
        self.assertEqual(len([c for c in res.doc["checks"]
                              if c["name"] == "bundle.archive"]), 3)
        # No temporary file left.
        for root, _, files in os.walk(self.out):
            for f in files:
                self.assertFalse(f.endswith(".part") or f.endswith(".tmp"), f)

    def test_wrong_local_archive_is_refused(self):
        bad = os.path.join(self.dir, "bad", FIX.windows.filename)
        os.makedirs(os.path.dirname(bad))
        with open(bad, "wb") as f:
            f.write(b"not the archive")
        res = run_json(["bundle", "--manifest", FIX.windows.manifest_path,
                        "-o", self.out, "--archive", bad, "--cache-dir",
                        self.cache], expect=3)
        self.assertEqual(res.doc["error"]["code"], "CHECKSUM")
        self.assertFalse(os.path.exists(os.path.join(
            self.out, "cudnn/redist/cudnn/windows-x86_64",
            FIX.windows.filename)))

    def fleet_install(self, mirror, env=None):
        """A fleet machine: empty cache, the bundled manifest, the mirror."""
        ws = self.workspace("fleet", platform=WINDOWS)
        man = os.path.join(self.out, "cudnn-deploy/manifests",
                           "cudnn-test-windows.json")
        e = {"CUDNN_DEPLOY_MIRROR": mirror}
        e.update(env or {})
        res = run_json(["install"] + ws.target_args +
                       ["--manifest", man, "--with", "zlibwapi",
                        "--no-verify", "--cache-dir",
                        os.path.join(self.dir, "fleet-cache")],
                       env=e, expect=0)
        self.assertTrue(os.path.isfile(os.path.join(ws.tree, ZLIB_DEST)))
        self.assertTrue(res.doc["changed"])
        return res

    def test_served_over_http(self):
        self.bundle(expect=0)
        srv = httpfault.FaultServer(fleetfix.dir_files(self.out))
        with srv:
            self.fleet_install(srv.url("/"))
            paths = [r.path for r in srv.requests]
        self.assertIn("/cudnn/redist/cudnn/windows-x86_64/" +
                      FIX.windows.filename, paths)

    def test_served_from_a_folder(self):
        self.bundle(expect=0)
        self.fleet_install("file://" + os.path.abspath(self.out) + "/")

    def test_served_through_a_proxy(self):
        self.bundle(expect=0)
        srv = httpfault.FaultServer(fleetfix.dir_files(self.out))
        with srv, proxyserver.Proxy() as px:
            # The mirror's host name exists only for the proxy.
            url = srv.url("/").replace("127.0.0.1", "bundle.invalid")
            px.alias("bundle.invalid", "127.0.0.1")
            self.fleet_install(url, env={"http_proxy": px.url,
                                         "https_proxy": px.url,
                                         "no_proxy": ""})
            self.assertTrue(any("bundle.invalid" in r for r in px.requests),
                            px.requests)
        # no_proxy naming the host: the proxy is bypassed (and the name
        # does not resolve, so the install fails with a network error).
        srv = httpfault.FaultServer(fleetfix.dir_files(self.out))
        with srv, proxyserver.Proxy() as px:
            px.alias("bundle.invalid", "127.0.0.1")
            url = srv.url("/").replace("127.0.0.1", "bundle.invalid")
            ws = self.workspace("fleet2", platform=WINDOWS)
            man = os.path.join(self.out, "cudnn-deploy/manifests",
                               "cudnn-test-windows.json")
            res = run_json(["install"] + ws.target_args +
                           ["--manifest", man, "--no-verify", "--retries",
                            "0", "--cache-dir",
                            os.path.join(self.dir, "c2")],
                           env={"CUDNN_DEPLOY_MIRROR": url,
                                "http_proxy": px.url,
                                "no_proxy": "bundle.invalid"}, expect=4)
            self.assertEqual(res.doc["error"]["code"], "NETWORK")
            self.assertEqual(px.requests, [])


# Everything a folder name may hold that a list entry can hold too (no ':'
# or ';': those are refused, RefusedValues below).
HOSTILE = "we ird $x 'q\"`b`&#!%^ \u00e9"


def runner_env_file(text):
    """GITHUB_ENV as the runner reads it (actions/runner's
    SetEnvFileCommand, documented as "Workflow commands: Setting an
    environment variable" and "Multiline strings"): lines, split at "\n",
    "\r\n" or a lone "\r"; empty lines skipped; a line whose first '=' comes
    before any "<<" is NAME=VALUE; else NAME<<DELIM takes the following lines
    up to one that is exactly DELIM, joined by "\n". Returns [(name, value)]
    in order; raises ValueError where the runner fails the step."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line == "":
            continue
        eq, hd = line.find("="), line.find("<<")
        if eq >= 0 and (hd < 0 or eq < hd):
            name, value = line[:eq], line[eq + 1:]
            if not name:
                raise ValueError("empty name: %r" % line)
            out.append((name, value))
        elif hd >= 0:
            name, delim = line[:hd], line[hd + 2:]
            if not name or not delim:
                raise ValueError("bad heredoc: %r" % line)
            body = []
            while True:
                if i >= len(lines):
                    raise ValueError("no closing %r" % delim)
                line = lines[i]
                i += 1
                if line == delim:
                    break
                body.append(line)
            out.append((name, "\n".join(body)))
        else:
            raise ValueError("invalid line: %r" % line)
    return out


class Env(CddTestCase):
    """env: eval-able settings for each shell (sh evaluated here, fish when
    installed), --json, --github, --write-activation."""

    def tree(self):
        root = os.path.join(self.scratch("env"), HOSTILE, "cuda-11.8")
        cddtest.make_cuda_tree(root, cddtest.LINUX)
        return root

    def eval_sh(self, shell, script, env, show):
        prog = 'eval "$1"; ' + "; ".join(
            'printf "%%s\\n" "${%s-UNSET}"' % v for v in show)
        e = dict(cddtest.clean_env(None))
        for k, v in env.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        p = subprocess.run([shell, "-c", prog, shell, script],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=e, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        return p.stdout.decode().split("\n")[:len(show)]

    def test_sh_output_evaluates_to_the_right_values(self):
        root = self.tree()
        res = run(["env", "--cuda-root", root, "--shell", "sh"], expect=0)
        shells = [s for s in ("sh", "dash", "bash", "zsh") if shutil.which(s)]
        for shell in shells:
            got = self.eval_sh(shell, res.out, {"LD_LIBRARY_PATH": None,
                                                "PATH": "/usr/bin:/bin"},
                               ["CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH",
                                "PATH"])
            self.assertEqual(got, [root, root, root + "/lib64",
                                   root + "/bin:/usr/bin:/bin"], shell)
            got = self.eval_sh(shell, res.out, {"LD_LIBRARY_PATH": "/opt/x"},
                               ["LD_LIBRARY_PATH"])
            self.assertEqual(got, [root + "/lib64:/opt/x"], shell)

    def test_fish_output_evaluates_when_fish_is_here(self):
        if not shutil.which("fish"):
            self.skipTest("fish is not installed")
        root = self.tree()
        res = run(["env", "--cuda-root", root, "--shell", "fish"], expect=0)
        p = subprocess.run(["fish", "-c", res.out + "\nprintf '%s\\n' "
                            "$CUDA_PATH $LD_LIBRARY_PATH[1]"],
                           stdout=subprocess.PIPE, timeout=30)
        self.assertEqual(p.stdout.decode().split("\n")[:2],
                         [root, root + "/lib64"])

    def test_powershell_and_cmd_text(self):
        root = self.tree()
        ps = run(["env", "--cuda-root", root, "--shell", "powershell"],
                 expect=0).out
        self.assertIn("$env:CUDA_PATH = '%s'" % root.replace("'", "''"), ps)
        self.assertIn("+ $(if ($env:LD_LIBRARY_PATH) { ':' + "
                      "$env:LD_LIBRARY_PATH })", ps)
        # A '"' in a value: cmd's caret form instead of the quoted one.
        res = run(["env", "--cuda-root", root, "--shell", "cmd"], expect=0)
        self.assertIn("set CUDA_PATH=", res.out)
        self.assertIn('^"', res.out)
        plain = os.path.join(self.scratch("plain"), "cuda")
        cddtest.make_cuda_tree(plain, cddtest.LINUX)
        cmd = run(["env", "--cuda-root", plain, "--shell", "cmd"],
                  expect=0).out
        self.assertIn('set "CUDA_PATH=%s"' % plain, cmd)
        self.assertIn('set "LD_LIBRARY_PATH=%s/lib64:%%LD_LIBRARY_PATH%%"'
                      % plain, cmd)

    def test_json_has_the_variables_and_nothing_else_on_stdout(self):
        root = self.tree()
        res = run_json(["env", "--cuda-root", root, "--shell", "sh"],
                       expect=0)
        v = res.doc["variables"]
        self.assertEqual(v["CUDA_PATH"], {"set": root})
        self.assertEqual(v["LD_LIBRARY_PATH"], {"prepend": root + "/lib64"})
        self.assertFalse(res.doc["changed"])
        self.assertIn("export CUDA_HOME=", res.doc["script"])

    def test_github_files(self):
        root = self.tree()
        d = self.scratch("gh")
        genv, gpath = os.path.join(d, "env"), os.path.join(d, "path")
        with open(genv, "w") as f:
            f.write("EARLIER=1\n")
        res = run(["env", "--cuda-root", root, "--github"],
                  env={"GITHUB_ENV": genv, "GITHUB_PATH": gpath,
                       "LD_LIBRARY_PATH": "/opt/x"}, expect=0)
        self.assertEqual(res.out, "")
        with open(genv) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines, ["EARLIER=1",
                                 "LD_LIBRARY_PATH=%s/lib64:/opt/x" % root,
                                 "CUDA_PATH=" + root, "CUDA_HOME=" + root])
        with open(gpath) as f:
            self.assertEqual(f.read().splitlines(), [root + "/bin"])
        res = run_json(["env", "--cuda-root", root, "--github"],
                       env={"GITHUB_ENV": None, "GITHUB_PATH": None},
                       expect=2)
        self.assertIn("GITHUB_ENV", res.doc["error"]["message"])

    def test_write_activation_recorded_sourced_and_uninstalled(self):
        ws = self.workspace(tree="prefix")
        before = ws.snap()
        # Nothing installed yet: refused.
        res = run_json(["env"] + ws.target_args + ["--write-activation"],
                       expect=3)
        self.assertIn("install first", res.doc["error"]["message"])
        run_json(install_args(ws, FIX.linux), expect=0)
        res = run_json(["env"] + ws.target_args + ["--write-activation"],
                       expect=0)
        self.assertTrue(res.doc["changed"])
        on = os.path.join(ws.tree, "etc/conda/activate.d/cudnn-deploy.sh")
        off = os.path.join(ws.tree, "etc/conda/deactivate.d/cudnn-deploy.sh")
        for p in (on, off, on[:-2] + "fish", off[:-2] + "fish"):
            self.assertTrue(os.path.isfile(p), p)
        rc = cddtest.read_receipt(ws.tree)
        roles = {f["path"]: f["role"] for f in rc["files"]}
        self.assertEqual(roles["etc/conda/activate.d/cudnn-deploy.sh"],
                         "activation")
        # Sourced as conda does: the library folder first, then put back.
        for start in (None, "/opt/x"):
            e = dict(cddtest.clean_env(None))
            e.pop("LD_LIBRARY_PATH", None)
            if start:
                e["LD_LIBRARY_PATH"] = start
            prog = ('. "$1"; printf "%s\\n" "$LD_LIBRARY_PATH"; . "$2"; '
                    'printf "%s\\n" "${LD_LIBRARY_PATH-UNSET}"')
            p = subprocess.run(["sh", "-c", prog, "sh", on, off],
                               stdout=subprocess.PIPE, env=e, check=True)
            want = ws.tree + "/lib" + (":" + start if start else "")
            self.assertEqual(p.stdout.decode().split("\n")[:2],
                             [want, start or "UNSET"])
        # Again: nothing to do. status and verify's files layer see them.
        res = run_json(["env"] + ws.target_args + ["--write-activation"],
                       expect=0)
        self.assertFalse(res.doc["changed"])
        run_json(["status"] + ws.target_args, expect=0)
        # Changed by hand: status says so.
        with open(on, "a") as f:
            f.write("# edit\n")
        run_json(["status"] + ws.target_args, expect=1)
        run_json(["env"] + ws.target_args + ["--write-activation"], expect=0)
        # A foreign file of that name is not replaced.
        ws2 = self.workspace("ws2", tree="prefix")
        run_json(install_args(ws2, FIX.linux), expect=0)
        cddtest.put_file(ws2.tree, "etc/conda/activate.d/cudnn-deploy.sh",
                         "mine\n")
        res = run_json(["env"] + ws2.target_args + ["--write-activation"],
                       expect=3)
        self.assertIn("not an activation script", res.doc["error"]["message"])
        # Uninstall removes them with the rest, folders included.
        un = run_json(["uninstall"] + ws.target_args, expect=0)
        self.assertEqual(plan_of(un.doc).get(
            "etc/conda/deactivate.d/cudnn-deploy.fish"), "remove")
        self.assertEqual(cddtest.without_state(ws.snap()),
                         cddtest.without_state(before))

    def test_write_activation_windows_prefix_writes_bat_and_ps1(self):
        ws = self.workspace(tree="prefix", platform=WINDOWS)
        run_json(install_args(ws, FIX.windows), expect=0)
        run_json(["env"] + ws.target_args + ["--write-activation"], expect=0)
        d = os.path.join(ws.tree, "etc/conda")
        with open(os.path.join(d, "activate.d/cudnn-deploy.bat")) as f:
            bat = f.read()
        with open(os.path.join(d, "deactivate.d/cudnn-deploy.ps1")) as f:
            ps1 = f.read()
        self.assertIn('if defined PATH set "_CUDNN_DEPLOY_SAVED_PATH=%PATH%"',
                      bat)
        self.assertIn("\\Library\\bin;%PATH%", bat)
        self.assertIn("if (Test-Path Env:_CUDNN_DEPLOY_SAVED_PATH) "
                      "{ $env:PATH = $env:_CUDNN_DEPLOY_SAVED_PATH", ps1)
        self.assertFalse(os.path.exists(os.path.join(
            d, "activate.d/cudnn-deploy.sh")))

    def test_write_activation_needs_a_prefix(self):
        root = self.tree()
        res = run_json(["env", "--cuda-root", root, "--write-activation"],
                       expect=2)
        self.assertIn("--prefix", res.doc["error"]["message"])


class RefusedValues(CddTestCase):
    """Values a destination cannot hold, from the attacker's side: a target
    folder holding the list separator would be split by every loader into
    two entries (the second relative to the working folder); an inherited
    LD_LIBRARY_PATH holding "\nBASH_ENV=..." must not become a variable of
    its own in GITHUB_ENV. A folder the user typed is a usage error (2), one
    the environment or the tree named is the target's (3)."""

    def tree(self, name):
        root = os.path.join(self.scratch("t"), name, "cuda-11.8")
        cddtest.make_cuda_tree(root, cddtest.LINUX, version="11.8.0")
        return root

    def test_list_separator_in_the_target_is_refused(self):
        d = self.scratch("gh")
        genv, gpath = os.path.join(d, "env"), os.path.join(d, "path")
        for name, why in (("a:b", "':'"), ("a;b", "';'"),
                          (":/tmp/evil", "':'")):
            root = self.tree(name)
            for shell in ("sh", "bash", "zsh", "fish", "powershell", "cmd",
                          "cmd-batch"):
                res = run_json(["env", "--cuda-root", root, "--shell", shell],
                               expect=2)
                msg = res.doc["error"]["message"]
                self.assertIn("LD_LIBRARY_PATH", msg)
                self.assertIn(why, msg)
                self.assertIn("split", msg)
            res = run(["env", "--cuda-root", root, "--github"],
                      env={"GITHUB_ENV": genv, "GITHUB_PATH": gpath},
                      expect=2)
            self.assertEqual(res.out, "")
            self.assertFalse(os.path.exists(genv) or os.path.exists(gpath))
            # Named by CUDA_PATH_V11_8, not typed: the tree's fault.
            res = run_json(["env", "--cuda", "v11.8"],
                           env={"CUDA_PATH_V11_8": root}, expect=3)
            self.assertIn("CUDA_PATH_V11_8", res.doc["error"]["message"])

    def test_inherited_value_with_a_line_break_stays_one_variable(self):
        root = self.tree("plain")
        d = self.scratch("gh")
        genv, gpath = os.path.join(d, "env"), os.path.join(d, "path")
        with open(genv, "w") as f:
            f.write("EARLIER=1\n")
        hostile = ("/opt/x\nBASH_ENV=/tmp/evil.sh\nEOF\nPATH<<EOF\n"
                   "CUDNN_DEPLOY_EOF_\n")
        res = run(["env", "--cuda-root", root, "--github"],
                  env={"GITHUB_ENV": genv, "GITHUB_PATH": gpath,
                       "LD_LIBRARY_PATH": hostile}, expect=0)
        self.assertIn("several lines", res.err)
        with open(genv, newline="") as f:
            text = f.read()
        got = runner_env_file(text)
        self.assertEqual([n for n, _ in got],
                         ["EARLIER", "LD_LIBRARY_PATH", "CUDA_PATH",
                          "CUDA_HOME"], text)
        self.assertEqual(dict(got)["LD_LIBRARY_PATH"],
                         root + "/lib64:" + hostile)
        self.assertNotIn("BASH_ENV", dict(got))
        # The delimiter is drawn afresh each time.
        delims = [l.split("<<", 1)[1] for l in text.split("\n")
                  if l.startswith("LD_LIBRARY_PATH<<")]
        run(["env", "--cuda-root", root, "--github"],
            env={"GITHUB_ENV": genv, "GITHUB_PATH": gpath,
                 "LD_LIBRARY_PATH": hostile}, expect=0)
        with open(genv, newline="") as f:
            text = f.read()
        delims2 = [l.split("<<", 1)[1] for l in text.split("\n")
                   if l.startswith("LD_LIBRARY_PATH<<")]
        self.assertEqual(len(delims2), 2)
        self.assertNotEqual(delims2[0], delims2[1])
        self.assertEqual(delims2[0], delims[0])
        self.assertEqual(len(runner_env_file(text)), 7)
        # A carriage return cannot come back out of either form: refused,
        # and nothing appended.
        before = text
        res = run_json(["env", "--cuda-root", root, "--github"],
                       env={"GITHUB_ENV": genv, "GITHUB_PATH": gpath,
                            "LD_LIBRARY_PATH": "/opt/x\rBASH_ENV=/tmp/e"},
                       expect=2)
        self.assertIn("carriage return", res.doc["error"]["message"])
        with open(genv, newline="") as f:
            self.assertEqual(f.read(), before)

    def test_doctor_fix_keeps_only_what_the_folder_fits(self):
        # ':' cannot go on LD_LIBRARY_PATH but is plain in ld.so.conf; with
        # '#' too, neither: the finding stays, with no command.
        for name, want in (("a:b", ["system-wide"]), ("a:b#c", [])):
            root = self.tree(name)
            res = run_json(["doctor", "--cuda-root", root, "--fix-shell",
                            "sh"], env={"LD_LIBRARY_PATH": None},
                           expect=None)
            self.assertIn(res.rc, (0, 1), res.err)
            ck = {c["name"]: c for c in res.doc["checks"]}
            c = ck["target.search"]
            self.assertEqual(c["status"], "warn")
            fixes = c.get("fixes", [])
            self.assertEqual([f["where"] for f in fixes], want, c)
            for f in fixes:
                self.assertNotIn("LD_LIBRARY_PATH=", f["command"])

    def test_plain_values_keep_the_one_line_form(self):
        root = self.tree("plain")
        d = self.scratch("gh")
        genv, gpath = os.path.join(d, "env"), os.path.join(d, "path")
        run(["env", "--cuda-root", root, "--github"],
            env={"GITHUB_ENV": genv, "GITHUB_PATH": gpath,
                 "LD_LIBRARY_PATH": "/opt/x"}, expect=0)
        with open(genv) as f:
            self.assertNotIn("<<", f.read())


def wine_env():
    """The environment to run Wine's cmd in, with a prefix of these tests'
    own (CDD_WINEPREFIX when the suite names one), or None: no wine."""
    if not shutil.which("wine"):
        return None
    prefix = os.environ.get("CDD_WINEPREFIX") or os.path.join(
        cddtest.TMP_ROOT, "wineprefix-shells")
    e = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all",
             WINEDLLOVERRIDES="mscoree,mshtml=")
    return e


def run_bat(e, bat, extra_env=None):
    """bat run by Wine's cmd; its `set NAME` lines as a dict."""
    env = dict(e, **(extra_env or {}))
    p = subprocess.run(["wine", "cmd", "/c", "Z:" + bat.replace("/", "\\")],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       stdin=subprocess.DEVNULL, env=env, timeout=300)
    text = p.stdout.decode("latin-1").replace("\r", "")
    vals = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            vals.setdefault(k.upper(), v)
    return vals, text


# ASCII: Wine's cmd reads a batch file in its ANSI code page, so non-ASCII
# names are checked as text only (test_shell, docs/fleet.md).
BAT_HOSTILE = "50% & (x86) ^!a 'q' #%PATH%x %%"


class CmdBatch(CddTestCase):
    """cmd's batch form (--shell cmd-batch, the conda activation .bat) run
    by Wine's cmd: every '%' survives, nothing expands, nothing runs."""

    def setUp(self):
        self.e = wine_env()
        if self.e is None:
            self.skipTest("wine is not installed (scripts/install-deps.sh "
                          "--windows)")

    def test_env_batch_output_sets_exact_values(self):
        root = os.path.join(self.scratch("b"), BAT_HOSTILE, "cuda")
        cddtest.make_cuda_tree(root, cddtest.LINUX)
        out = run(["env", "--cuda-root", root, "--shell", "cmd-batch"],
                  expect=0).out
        self.assertTrue(out.startswith("@rem cudnn-deploy: the batch-file "
                                       "form"), out)
        bat = os.path.join(self.scratch("bat"), "t.bat")
        marker = os.path.join(self.scratch("m"), "ran")
        with open(bat, "w", newline="\r\n") as f:
            f.write("@echo off\n" + out +
                    "set CUDA_PATH\nset CUDA_HOME\nset LD_LIBRARY_PATH\n")
        vals, text = run_bat(self.e, bat, {"LD_LIBRARY_PATH": "/old"})
        self.assertEqual(vals.get("CUDA_PATH"), root, text)
        self.assertEqual(vals.get("CUDA_HOME"), root, text)
        self.assertEqual(vals.get("LD_LIBRARY_PATH"), root + "/lib64:/old",
                         text)
        self.assertFalse(os.path.exists(marker))
        # Unset: the folder alone, no empty entry (the current folder).
        e = dict(self.e)
        e.pop("LD_LIBRARY_PATH", None)
        vals, text = run_bat(e, bat)
        self.assertEqual(vals.get("LD_LIBRARY_PATH"), root + "/lib64", text)
        # The prompt form in a batch file is what the issue saw: the value
        # comes out wrong. (It is labelled for the prompt.)
        prompt = run(["env", "--cuda-root", root, "--shell", "cmd"],
                     expect=0).out
        self.assertTrue(prompt.startswith("rem cudnn-deploy: the cmd prompt "
                                          "form"), prompt)
        with open(bat, "w", newline="\r\n") as f:
            f.write("@echo off\n" + prompt + "set CUDA_PATH\n")
        vals, text = run_bat(self.e, bat)
        self.assertNotEqual(vals.get("CUDA_PATH"), root, text)

    def test_activation_bat_round_trip(self):
        ws = self.workspace("pct 100% & (x)", tree="prefix", platform=WINDOWS)
        run_json(install_args(ws, FIX.windows), expect=0)
        run_json(["env"] + ws.target_args + ["--write-activation"], expect=0)
        d = os.path.join(ws.tree, "etc/conda")
        on = os.path.join(d, "activate.d/cudnn-deploy.bat")
        off = os.path.join(d, "deactivate.d/cudnn-deploy.bat")
        bat = os.path.join(self.scratch("bat"), "t.bat")
        # In the test's own batch file too a '%' is "%%".
        win_on = "Z:" + on.replace("/", "\\").replace("%", "%%")
        win_off = "Z:" + off.replace("/", "\\").replace("%", "%%")
        with open(bat, "w", newline="\r\n") as f:
            f.write('@echo off\ncall "%s"\nset PATH\n' % win_on)
        vals, text = run_bat(self.e, bat)
        lib = ws.tree.replace("/", "\\") + "\\Library\\bin"
        self.assertTrue(vals.get("PATH", "").startswith(lib + ";"),
                        (lib, text))
        with open(bat, "w", newline="\r\n") as f:
            f.write('@echo off\nset "P0=%%PATH%%"\ncall "%s"\ncall "%s"\n'
                    'if "%%PATH%%"=="%%P0%%" echo SAME=1\n' % (win_on, win_off))
        vals, text = run_bat(self.e, bat)
        self.assertEqual(vals.get("SAME"), "1", text)


class ShellOption(CddTestCase):
    """One meaning per option name: --shell is env's script; the report's
    fixes take --fix-shell, and the old --shell there still works, with a
    note."""

    def test_fix_shell_and_the_deprecated_spelling(self):
        root = os.path.join(self.scratch("s"), "cuda")
        cddtest.make_cuda_tree(root, cddtest.LINUX)
        new = run_json(["doctor", "--cuda-root", root, "--fix-shell", "fish"],
                       expect=None)
        self.assertNotIn("note: --shell", new.err)
        old = run_json(["doctor", "--cuda-root", root, "--shell", "fish"],
                       expect=None)
        self.assertEqual(old.rc, new.rc)
        self.assertIn("note: --shell for install, verify and doctor is "
                      "deprecated: use --fix-shell", old.err)
        self.assertEqual(old.doc.get("shell"), new.doc.get("shell"))
        self.assertEqual(new.doc.get("shell"), "fish")
        # env's --shell is no deprecated spelling.
        res = run(["env", "--cuda-root", root, "--shell", "fish"], expect=0)
        self.assertNotIn("note: --shell", res.err)
        # Help says both.
        h = run(["verify", "--help"], expect=0).out
        self.assertIn("--fix-shell SHELL", h)
        self.assertIn("deprecated: the old spelling of --fix-shell", h)


if __name__ == "__main__":
    cddtest.main()
