"""The attacker's suite: someone who can write into a target tree (and its
.cudnn-deploy/ state) but not outside it tries to make cudnn-deploy, run by
a more privileged account, write, rename, delete or read as state anything
outside the tree (issue 8, docs/security.md).

Every attack here is built from state that today's parsers accept (a
journal with a well-formed header and records, a receipt with every field
right), so a refusal proves the path and type checks, not a parse error.
Each test asserts the same four things:

  - exit code 3 (invalid state);
  - exactly one line on stderr (run with --quiet), the error, naming the
    state file (or the tree path) at fault;
  - the tree unchanged (snapshot, the lock file's content aside);
  - the "outside" folder beside the tree unchanged (snapshot).

The last classes are the message escaping (control characters in a path
never reach the terminal raw) and the lock's holder message (never pid 0,
never the stale pid of an exited process).

Run alone: CDD_BIN=build/cudnn-deploy python3 tests/e2e/test_tamper.py -v
"""

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import (BACKUP, FIX, IGNORE_LOCK, LOCK, LOG, MANIFEST_COPY,  # noqa: E402
                     RECEIPT, STATE, CddTestCase, install_args, run)

JOURNAL = STATE + "/journal"
TXN = "20260101T000000Z-4242"          # a journal's id, of the shape ids have
OTHER_TXN = "20250101T000000Z-1717"    # an earlier transaction's backup
PAYLOAD = b"* * * * * root /bin/sh -c 'echo owned'\n"


_JOURNAL_VERSION = []


def journal_version():
    """The journal format the binary under test writes (its header's
    version), learned once by killing a real install just after its journal
    is on disk: planted journals must pass that binary's parser, so that a
    refusal proves the path and type checks, not a parse error."""
    if _JOURNAL_VERSION:
        return _JOURNAL_VERSION[0]
    if not cddtest.has_fault_hook():
        raise unittest.SkipTest("needs a test build (-DCDD_FAULT_INJECTION=ON)")
    folder = os.path.join(cddtest.WORK_ROOT, "journal-probe")
    for n in range(1, 200):
        ws = cddtest.Workspace(folder)
        r = run(install_args(ws, FIX.linux_mini),
                env={"CUDNN_DEPLOY_TEST_FAULT": "kill:%d" % n})
        path = ws.path(JOURNAL)
        if r.rc == 0:
            break                      # ran to its end: no kill landed there
        if os.path.isfile(path):
            with open(path) as f:
                text = f.read()
            if "\nE\n" in text:
                head = text.split("\n", 1)[0].split(" ")
                _JOURNAL_VERSION.append(int(head[1]))
                shutil.rmtree(folder, ignore_errors=True)
                return _JOURNAL_VERSION[0]
    raise AssertionError("no journal seen while killing an install step by "
                         "step (is fault injection built in?)")


def prev_file(data):
    """A journal's record of a file that goes to backup (format 2)."""
    return "f:%d:%s" % (len(data), cddtest.sha256_bytes(data))


def journal_text(records, txn=TXN, kind="install", mode="keep-backup",
                 end=True, commit=False):
    """A journal as the binary writes it: a space-separated header, one
    tab-separated record a line, "E" when the plan is whole, "C" once
    committed. records: tuples; a last field starting "f:" or "l:" is the
    record of what went to backup (format 2 writes it: D always, P when the
    destination existed; format 1 has none)."""
    version = journal_version()
    lines = ["cudnn-deploy-journal %d %s %s %s" % (version, txn, kind, mode)]
    for r in records:
        r = list(r)
        if version < 2 and r[-1][:2] in ("f:", "l:"):
            r = r[:-1]
        lines.append("\t".join(r))
    if end:
        lines.append("E")
    if commit:
        lines.append("C")
    return "\n".join(lines) + "\n"


def put(path, data=b"", mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(path, mode)


def file_entry(path, data, role="header"):
    return {"path": path, "role": role, "sha256": cddtest.sha256_bytes(data),
            "size": len(data)}


class TamperCase(CddTestCase):
    """Builds attacks on a workspace's tree and checks the refusal."""

    fx = FIX.linux_mini
    fx_old = FIX.linux_mini_old

    # -- building state -----------------------------------------------------

    def plain(self, ws, fx=None):
        """Install fx (default: the mini fixture) for real."""
        self.install(ws, fx or self.fx)

    def upgraded(self, ws):
        """An install of the old mini fixture upgraded to the new one, so
        .cudnn-deploy/backup/<id>/ holds the old files and receipt. Returns
        <id>."""
        self.install(ws, self.fx_old)
        self.install(ws, self.fx)
        ids = cddtest.backup_dirs(ws.tree)
        self.assertEqual(len(ids), 1, "the upgrade keeps one backup")
        return ids[0]

    def link(self, ws, rel, target):
        """Make tree path rel a symbolic link to target (an absolute path
        outside, or a relative one as written)."""
        p = ws.path(rel)
        if os.path.lexists(p):
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)

    def move_out(self, ws, rel, name):
        """Move tree path rel to outside/name and leave a link to it in its
        place (the attacker's "the state lives elsewhere")."""
        dest = os.path.join(ws.outside, name)
        shutil.move(ws.path(rel), dest)
        os.symlink(dest, ws.path(rel))
        return dest

    def outside(self, ws, rel):
        return os.path.join(ws.outside, rel)

    def edit_receipt(self, ws, edit):
        with open(ws.path(RECEIPT)) as f:
            doc = json.load(f)
        edit(doc)
        with open(ws.path(RECEIPT), "w") as f:
            json.dump(doc, f, indent=2)
        return doc

    def plant_journal(self, ws, text):
        put(ws.path(JOURNAL), text)

    # -- the four assertions ------------------------------------------------

    def assertRefused(self, ws, args, names, ignore=IGNORE_LOCK):
        """Run args (a command line without the global options) on the
        tampered workspace: exit 3, one line on stderr naming one of names,
        tree and outside unchanged. All four are checked before failing, so
        a failure says everything that went wrong."""
        before = ws.snap(ignore)
        ws._outside = ws.outside_state()   # outside as the attacker left it
        res = run(["--quiet"] + list(args))
        problems = []
        if res.rc != 3:
            problems.append("exit %d, expected 3 (invalid state)" % res.rc)
        lines = res.err.splitlines()
        if len(lines) != 1:
            problems.append("%d lines on stderr, expected exactly one"
                            % len(lines))
        elif not lines[0].startswith("cudnn-deploy: error: "):
            problems.append("stderr is not the error line: %r" % lines[0])
        elif not any(n in lines[0] for n in names):
            problems.append("the message names none of %r" % (names,))
        tree = cddtest.diff_snapshots(before, ws.snap(ignore))
        if tree:
            problems.append("the tree changed:\n      " + "\n      ".join(tree))
        out = ws.outside_changes()
        if out:
            problems.append("OUTSIDE THE TREE changed:\n      "
                            + "\n      ".join(out))
        if problems:
            # The first word says how bad: OUTSIDE CHANGED (the promise is
            # broken), NOT REFUSED (tampered state accepted), or MESSAGE (the
            # refusal is right but its message is not one line naming the
            # state file).
            kind = ("OUTSIDE CHANGED" if out else
                    "NOT REFUSED" if res.rc != 3 or tree else "MESSAGE")
            self.fail("\n  - ".join([kind + ": refused wrongly:"] + problems)
                      + cddtest.describe([cddtest.BIN, "--quiet"] + list(args),
                                         res.rc, res.out, res.err))

    # -- command lines ------------------------------------------------------

    def args_for(self, ws, command):
        t = ws.target_args
        if command == "install":
            return install_args(ws, self.fx)
        if command == "install-old":
            return install_args(ws, self.fx_old)
        if command == "verify":
            return ["verify"] + t + ["--level", "files",
                                     "--manifest", self.fx.manifest_path]
        if command == "status":
            return ["status", "--check"] + t
        return [command] + t


def generate(cls, scenarios):
    """One test method per (scenario, command), so `-v` lists each result:
    test_<scenario>__<command>. scenarios: {name: (commands, method name)}."""
    for name, (commands, builder) in scenarios.items():
        for command in commands:
            def test(self, builder=builder, command=command):
                getattr(self, builder)(command)
            test.__name__ = "test_%s__%s" % (name, command.replace("-", "_"))

            setattr(cls, test.__name__, test)
    return cls


# ---------------------------------------------------------------------------
# 1. .cudnn-deploy/backup and backup/<id> as links (install, uninstall)
# ---------------------------------------------------------------------------

class BackupLinks(TamperCase):

    def test_install_replacing_a_foreign_file_backup_linked_out(self):
        # install backs up the hand-copied header it replaces: to wherever
        # backup/ leads.
        ws = self.workspace()
        cddtest.put_file(ws.tree, "include/cudnn.h", b"/* hand-copied cudnn.h */\n")
        os.makedirs(ws.path(STATE))
        os.makedirs(self.outside(ws, "stash"))
        self.link(ws, BACKUP, self.outside(ws, "stash"))
        self.assertRefused(ws, self.args_for(ws, "install"),
                           (STATE + "/backup",))

    def test_install_replacing_a_foreign_file_backup_linked_to_missing(self):
        # A dangling link: the backup folders would be created outside.
        ws = self.workspace()
        cddtest.put_file(ws.tree, "include/cudnn.h", b"/* hand-copied cudnn.h */\n")
        os.makedirs(ws.path(STATE))
        self.link(ws, BACKUP, self.outside(ws, "not-yet"))
        self.assertRefused(ws, self.args_for(ws, "install"),
                           (STATE + "/backup",))

    def test_upgrade_with_backup_linked_out(self):
        ws = self.workspace()
        self.plain(ws, self.fx_old)
        os.makedirs(self.outside(ws, "stash"))
        self.link(ws, BACKUP, self.outside(ws, "stash"))
        self.assertRefused(ws, self.args_for(ws, "install"),
                           (STATE + "/backup",))

    def test_upgrade_with_backup_relative_link_out(self):
        ws = self.workspace()
        self.plain(ws, self.fx_old)
        os.makedirs(self.outside(ws, "stash"))
        self.link(ws, BACKUP, "../../outside/stash")
        self.assertRefused(ws, self.args_for(ws, "install"),
                           (STATE + "/backup",))

    def test_uninstall_with_backup_linked_out(self):
        # uninstall would pull the old files from outside into the tree and
        # purge the folder there.
        ws = self.workspace()
        self.upgraded(ws)
        self.move_out(ws, BACKUP, "stash")
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup", RECEIPT))

    def test_status_and_verify_with_backup_linked_out(self):
        # Neither reads the backups, but a linked backup folder is tampered
        # state all the same: they say so instead of reporting a clean tree.
        ws = self.workspace()
        self.upgraded(ws)
        self.move_out(ws, BACKUP, "stash")
        for command in ("status", "verify"):
            with self.subTest(command=command):
                self.assertRefused(ws, self.args_for(ws, command),
                                   (STATE + "/backup",))

    def test_uninstall_with_backup_id_linked_out(self):
        ws = self.workspace()
        txn = self.upgraded(ws)
        self.move_out(ws, BACKUP + "/" + txn, "stash")
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup", RECEIPT))

    def test_uninstall_with_backup_subfolder_linked_out(self):
        # A link deeper down: backup/<id>/include.
        ws = self.workspace()
        txn = self.upgraded(ws)
        self.move_out(ws, BACKUP + "/" + txn + "/include", "stash")
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup", RECEIPT))


# ---------------------------------------------------------------------------
# 2. A receipt whose backup list names files that live outside via a link
# ---------------------------------------------------------------------------

class ReceiptBackupList(TamperCase):

    def backed_up(self, ws, names, link_rel, link_to):
        self.plain(ws)
        txn = cddtest.read_receipt(ws.tree)["transaction"]
        self.edit_receipt(ws, lambda d: d["backed_up"].extend(names))
        self.link(ws, link_rel.replace("<id>", txn), link_to)
        return txn

    def test_backed_up_sentinel_through_backup_id_link(self):
        # "restore" outside/sentinel.txt into the tree: it vanishes outside.
        ws = self.workspace()
        self.backed_up(ws, ["sentinel.txt"], BACKUP + "/<id>", ws.outside)
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup", RECEIPT))

    def test_backed_up_sentinel_through_backup_link(self):
        ws = self.workspace()
        self.plain(ws)
        txn = cddtest.read_receipt(ws.tree)["transaction"]
        shutil.copytree(ws.outside, self.outside(ws, "bk/" + txn),
                        symlinks=True)
        self.edit_receipt(ws, lambda d: d["backed_up"].append("include/cudnn.h"))
        self.link(ws, BACKUP, self.outside(ws, "bk"))
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup", RECEIPT))

    def test_backed_up_file_below_a_linked_backup_subfolder(self):
        # backup/<id>/etc is the link; the receipt names etc/sentinel.txt.
        ws = self.workspace()
        self.plain(ws)
        txn = cddtest.read_receipt(ws.tree)["transaction"]
        os.makedirs(ws.path(BACKUP + "/" + txn))
        self.edit_receipt(ws, lambda d: d["backed_up"].append("etc/sentinel.txt"))
        self.link(ws, BACKUP + "/" + txn + "/etc", ws.outside)
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup", RECEIPT))


# ---------------------------------------------------------------------------
# 3. A backed-up file replaced (by a link to outside, or other bytes)
# ---------------------------------------------------------------------------

class TamperedBackups(TamperCase):

    def test_backed_up_file_replaced_by_absolute_link_out(self):
        ws = self.workspace()
        txn = self.upgraded(ws)
        self.link(ws, BACKUP + "/" + txn + "/include/cudnn.h",
                  self.outside(ws, "sentinel.txt"))
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup",))

    def test_backed_up_file_replaced_by_relative_link_out(self):
        ws = self.workspace()
        txn = self.upgraded(ws)
        rel = BACKUP + "/" + txn + "/include/cudnn.h"
        target = os.path.relpath(self.outside(ws, "sentinel.txt"),
                                 os.path.dirname(ws.path(rel)))
        self.link(ws, rel, target)
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup",))

    def test_backed_up_link_retargeted_out(self):
        # The old soname link, backed up, now points outside.
        ws = self.workspace()
        txn = self.upgraded(ws)
        bk = ws.path(BACKUP + "/" + txn + "/lib64")
        links = sorted(n for n in os.listdir(bk)
                       if os.path.islink(os.path.join(bk, n)))
        self.assertTrue(links, "the old install's links are backed up")
        self.link(ws, BACKUP + "/" + txn + "/lib64/" + links[0],
                  self.outside(ws, "lib64/libcudnn.so.8.5.0"))
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup",))

    def test_backed_up_file_with_other_bytes(self):
        # Same type, same size, other bytes than the old receipt recorded.
        ws = self.workspace()
        txn = self.upgraded(ws)
        p = ws.path(BACKUP + "/" + txn + "/include/cudnn.h")
        with open(p, "rb") as f:
            data = bytearray(f.read())
        data[0] ^= 0xFF
        with open(p, "wb") as f:
            f.write(bytes(data))
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup",))

    def test_backed_up_receipt_replaced_by_link_out(self):
        # The old receipt in the backup: restored, it would be a link.
        ws = self.workspace()
        txn = self.upgraded(ws)
        rel = BACKUP + "/" + txn + "/" + RECEIPT
        shutil.copy(ws.path(rel), self.outside(ws, "receipt.json"))
        self.link(ws, rel, self.outside(ws, "receipt.json"))
        self.assertRefused(ws, self.args_for(ws, "uninstall"),
                           (STATE + "/backup",))


# ---------------------------------------------------------------------------
# 4. Planted journals replayed through a tree folder that leads outside
# ---------------------------------------------------------------------------

JOURNAL_COMMANDS = ("recover", "install", "uninstall")


class PlantedJournal(TamperCase):
    """Each scenario plants a journal (with the stage and backup it names)
    into a fresh tree and makes `cron` a link to the outside folder; the
    command, which recovers first, must refuse."""

    def fresh(self):
        ws = self.workspace()
        os.makedirs(ws.path(STATE))
        self.link(ws, "cron", ws.outside)
        return ws

    def refuse(self, ws, command):
        self.assertRefused(ws, self.args_for(ws, command), (JOURNAL,))

    def restore_writes_outside(self, command):
        # Roll-back of "D cron/payload": the backup copy returns to
        # cron/payload, i.e. outside/payload (think /etc/cron.d).
        ws = self.fresh()
        put(ws.path(BACKUP + "/" + TXN + "/cron/payload"), PAYLOAD)
        self.plant_journal(ws, journal_text(
            [("D", "cron/payload", prev_file(PAYLOAD))]))
        self.refuse(ws, command)

    def put_restore_writes_outside(self, command):
        # Roll-back of a P whose destination existed: the backup returns.
        ws = self.fresh()
        put(ws.path(STATE + "/stage-" + TXN + "/payload"), PAYLOAD)
        put(ws.path(BACKUP + "/" + TXN + "/cron/payload"), PAYLOAD)
        self.plant_journal(ws, journal_text(
            [("P", STATE + "/stage-" + TXN + "/payload", "cron/payload",
              prev_file(PAYLOAD))]))
        self.refuse(ws, command)

    def rollback_moves_outside_file_to_stage(self, command):
        # Roll-back of "P stage/f cron/sentinel.txt" with the staged file
        # missing: "the new file leaves" - outside/sentinel.txt is moved
        # into the stage, and the stage is deleted.
        ws = self.fresh()
        os.makedirs(ws.path(STATE + "/stage-" + TXN))
        self.plant_journal(ws, journal_text(
            [("P", STATE + "/stage-" + TXN + "/sentinel.txt",
              "cron/sentinel.txt")]))
        self.refuse(ws, command)

    def rollback_recreates_outside_folder(self, command):
        # Roll-back of "R cron/newdir": a removed folder comes back.
        ws = self.fresh()
        self.plant_journal(ws, journal_text([("R", "cron/newdir")]))
        self.refuse(ws, command)

    def rollback_removes_outside_folder(self, command):
        # Roll-back of "M cron/emptydir": a created folder goes when empty.
        ws = self.fresh()
        os.makedirs(self.outside(ws, "emptydir"))
        self.plant_journal(ws, journal_text(
            [("M", "cron/emptydir"),
             ("P", STATE + "/stage-" + TXN + "/x.h", "cron/emptydir/x.h")]))
        put(ws.path(STATE + "/stage-" + TXN + "/x.h"), b"/* x */\n")
        self.refuse(ws, command)

    def rollback_pulls_outside_file_via_backup_link(self, command):
        # backup -> outside/bk: roll-back of "D include/cuda.h" moves
        # outside/bk/<id>/include/cuda.h into the tree, then removes
        # outside/bk/<id>.
        ws = self.fresh()
        put(self.outside(ws, "bk/" + TXN + "/include/cuda.h"), PAYLOAD)
        self.link(ws, BACKUP, self.outside(ws, "bk"))
        os.unlink(ws.path("include/cuda.h"))
        self.plant_journal(ws, journal_text(
            [("D", "include/cuda.h", prev_file(PAYLOAD))]))
        self.refuse(ws, command)

    def committed_purge_through_backup_link(self, command):
        # A committed purge-backup journal: the clean-up removes
        # backup/<id> whole, i.e. outside/bk/<id> and all it holds.
        ws = self.fresh()
        put(self.outside(ws, "bk/" + TXN + "/important.txt"), PAYLOAD)
        self.link(ws, BACKUP, self.outside(ws, "bk"))
        self.plant_journal(ws, journal_text(
            [("D", "include/cudnn_old.h", prev_file(PAYLOAD))], kind="uninstall",
            mode="purge-backup", commit=True))
        self.refuse(ws, command)

    def committed_prunes_outside_folder(self, command):
        # A committed P from an older backup: its emptied folders are pruned
        # - through backup/<other> -> outside/bk2, outside/bk2/sub goes.
        ws = self.fresh()
        os.makedirs(self.outside(ws, "bk2/sub"))
        os.makedirs(ws.path(BACKUP))
        self.link(ws, BACKUP + "/" + OTHER_TXN, self.outside(ws, "bk2"))
        self.plant_journal(ws, journal_text(
            [("P", BACKUP + "/" + OTHER_TXN + "/sub/cudnn.h", "include/cudnn.h")],
            kind="uninstall", mode="purge-backup", commit=True))
        self.refuse(ws, command)

    def stage_is_a_link_out(self, command):
        # The stage itself is a link (no link is followed in the state
        # folder): removing "the stage" must not reach outside/stg.
        ws = self.fresh()
        put(self.outside(ws, "stg/new.h"), PAYLOAD)
        self.link(ws, STATE + "/stage-" + TXN, self.outside(ws, "stg"))
        self.plant_journal(ws, journal_text(
            [("P", STATE + "/stage-" + TXN + "/new.h", "include/new.h")]))
        self.refuse(ws, command)

    def backup_link_named_with_its_record(self, command):
        # The refusal names the record that would use the link, and where
        # the link leads: line 2 is the D record.
        ws = self.fresh()
        put(self.outside(ws, "bk/" + TXN + "/include/cuda.h"), PAYLOAD)
        self.link(ws, BACKUP, self.outside(ws, "bk"))
        self.plant_journal(ws, journal_text(
            [("D", "include/cuda.h", prev_file(PAYLOAD))]))
        self.assertRefused(ws, self.args_for(ws, command),
                           (JOURNAL + ": line 2: record D include/cuda.h",))
        r = run(["--quiet"] + self.args_for(ws, command))
        self.assertIn("(to " + self.outside(ws, "bk") + ")", r.err)

    def stray_stage_link_out(self, command):
        # No journal, a stage that is a link: a stage left by a killed
        # install is removed, but a link is none of ours - refused.
        ws = self.fresh()
        put(self.outside(ws, "stg/new.h"), PAYLOAD)
        self.link(ws, STATE + "/stage-" + TXN, self.outside(ws, "stg"))
        self.assertRefused(ws, self.args_for(ws, command),
                           (STATE + "/stage-" + TXN,))

    def unended_journal_with_stage_link_out(self, command):
        # A plan without "E": recovery removes the stage - a link outside.
        ws = self.fresh()
        put(self.outside(ws, "stg/new.h"), PAYLOAD)
        self.link(ws, STATE + "/stage-" + TXN, self.outside(ws, "stg"))
        self.plant_journal(ws, journal_text(
            [("P", STATE + "/stage-" + TXN + "/new.h", "include/new.h")],
            end=False))
        self.refuse(ws, command)


generate(PlantedJournal, {
    n: (JOURNAL_COMMANDS, n) for n in (
        "restore_writes_outside", "put_restore_writes_outside",
        "rollback_moves_outside_file_to_stage",
        "rollback_recreates_outside_folder", "rollback_removes_outside_folder",
        "rollback_pulls_outside_file_via_backup_link",
        "committed_purge_through_backup_link",
        "committed_prunes_outside_folder",
        "stage_is_a_link_out", "unended_journal_with_stage_link_out",
        "backup_link_named_with_its_record", "stray_stage_link_out")})


# ---------------------------------------------------------------------------
# 5. Journals naming absolute paths, "..", paths into .cudnn-deploy
# ---------------------------------------------------------------------------

class JournalPaths(TamperCase):

    def planted(self, command, records, **kw):
        ws = self.workspace()
        os.makedirs(ws.path(STATE + "/stage-" + TXN))
        self.plant_journal(ws, journal_text(records, **kw))
        self.assertRefused(ws, self.args_for(ws, command), (JOURNAL,))

    def absolute_dest(self, command):
        ws_out = os.path.join(cddtest.WORK_ROOT, "abs-target")
        self.planted(command, [("D", ws_out + "/sentinel.txt",
                                prev_file(cddtest.SENTINEL_TEXT))])

    def dotdot_dest(self, command):
        self.planted(command, [("D", "include/../../outside/sentinel.txt",
                                prev_file(cddtest.SENTINEL_TEXT))])

    def dotdot_source(self, command):
        self.planted(command, [("P", STATE + "/stage-" + TXN + "/../../../outside/x",
                                "include/x.h")])

    def source_outside_state(self, command):
        self.planted(command, [("P", "include/cuda.h", "include/x.h")])

    def delete_in_state_folder(self, command):
        self.planted(command, [("D", LOG, prev_file(b"{}\n"))])

    def delete_state_folder_case_variant(self, command):
        self.planted(command, [("D", ".CUDNN-DEPLOY/lock", prev_file(b"1\n"))])

    def folder_in_state_folder(self, command):
        self.planted(command, [("M", BACKUP + "/x")])

    def remove_state_folder(self, command):
        self.planted(command, [("R", STATE)])

    def id_with_slash(self, command):
        self.planted(command, [], txn="../../outside")

    def backslash_path(self, command):
        self.planted(command, [("D", "include\\..\\..\\outside\\sentinel.txt",
                                prev_file(cddtest.SENTINEL_TEXT))])


generate(JournalPaths, {
    n: (("recover",) if n not in ("dotdot_dest", "delete_in_state_folder")
        else ("recover", "install"), n) for n in (
        "absolute_dest", "dotdot_dest", "dotdot_source", "source_outside_state",
        "delete_in_state_folder", "delete_state_folder_case_variant",
        "folder_in_state_folder", "remove_state_folder", "id_with_slash",
        "backslash_path")})


# ---------------------------------------------------------------------------
# 6. State files and folders that are links
# ---------------------------------------------------------------------------

class StateLinks(TamperCase):
    """lock, .cudnn-deploy, journal, receipt.json, manifest.json and
    log.jsonl as links to outside: the same fault, one answer (exit 3)."""

    def lock_linked_out(self, command):
        # Opening it would truncate and write our pid outside.
        ws = self.workspace()
        self.plain(ws)
        put(self.outside(ws, "lockfile"), b"precious\n")
        self.link(ws, LOCK, self.outside(ws, "lockfile"))
        self.assertRefused(ws, self.args_for(ws, command), (LOCK,), ignore=())

    def lock_linked_to_missing(self, command):
        ws = self.workspace()
        self.plain(ws)
        self.link(ws, LOCK, self.outside(ws, "newlock"))
        self.assertRefused(ws, self.args_for(ws, command), (LOCK,), ignore=())

    def state_folder_linked_out(self, command):
        ws = self.workspace()
        self.plain(ws)
        self.move_out(ws, STATE, "state")
        self.assertRefused(ws, self.args_for(ws, command), (STATE,), ignore=())

    def journal_linked_out(self, command):
        ws = self.workspace()
        self.plain(ws)
        with open(ws.path("include/cudnn.h"), "rb") as f:
            header = f.read()
        put(self.outside(ws, "journal"),
            journal_text([("D", "include/cudnn.h", prev_file(header))]))
        self.link(ws, JOURNAL, self.outside(ws, "journal"))
        self.assertRefused(ws, self.args_for(ws, command), (JOURNAL,))

    def receipt_linked_out(self, command):
        ws = self.workspace()
        self.plain(ws)
        self.move_out(ws, RECEIPT, "receipt.json")
        self.assertRefused(ws, self.args_for(ws, command), (RECEIPT,))

    def manifest_copy_linked_out(self, command):
        ws = self.workspace()
        self.plain(ws)
        self.move_out(ws, MANIFEST_COPY, "manifest.json")
        self.assertRefused(ws, self.args_for(ws, command), (MANIFEST_COPY,))

    def log_linked_out(self, command):
        # Appending to it would write outside.
        ws = self.workspace()
        self.plain(ws)
        self.move_out(ws, LOG, "log.jsonl")
        self.assertRefused(ws, self.args_for(ws, command), (LOG,))

    def backup_linked_out(self, command):
        ws = self.workspace()
        self.upgraded(ws)
        self.move_out(ws, BACKUP, "stash")
        self.assertRefused(ws, self.args_for(ws, command), (STATE + "/backup",))


CHANGING = ("install", "uninstall", "recover")
READING = ("status", "verify")
generate(StateLinks, {
    "lock_linked_out": (CHANGING, "lock_linked_out"),
    "lock_linked_to_missing": (CHANGING, "lock_linked_to_missing"),
    "state_folder_linked_out": (CHANGING + READING, "state_folder_linked_out"),
    "journal_linked_out": (CHANGING, "journal_linked_out"),
    "receipt_linked_out": (("install", "install-old", "uninstall") + READING,
                           "receipt_linked_out"),
    "manifest_copy_linked_out": (("install-old", "uninstall", "verify"),
                                 "manifest_copy_linked_out"),
    "log_linked_out": (("install-old", "uninstall"), "log_linked_out"),
    "backup_linked_out": (("install-old",), "backup_linked_out"),
})


# ---------------------------------------------------------------------------
# 7. Receipts naming absolute paths, "..", the state folder, or a file
#    reached through a tree link that leads outside
# ---------------------------------------------------------------------------

class ReceiptPaths(TamperCase):

    def edited(self, command, edit, names=(RECEIPT,), setup=None):
        ws = self.workspace()
        self.plain(ws)
        if setup:
            setup(ws)
        self.edit_receipt(ws, lambda d: edit(ws, d))
        self.assertRefused(ws, self.args_for(ws, command), names)

    def files_absolute(self, command):
        self.edited(command, lambda ws, d: d["files"].append(
            file_entry(os.path.join(ws.outside, "sentinel.txt"),
                       cddtest.SENTINEL_TEXT)))

    def files_dotdot(self, command):
        self.edited(command, lambda ws, d: d["files"].append(
            file_entry("include/../../outside/sentinel.txt",
                       cddtest.SENTINEL_TEXT)))

    def files_in_state_folder(self, command):
        def edit(ws, d):
            with open(ws.path(LOG), "rb") as f:
                d["files"].append(file_entry(LOG, f.read(), "license"))
        self.edited(command, edit)

    def files_through_tree_link(self, command):
        # cron -> outside: uninstall would "remove" outside/sentinel.txt,
        # status and verify would read it as ours.
        self.edited(command, lambda ws, d: d["files"].append(
            file_entry("cron/sentinel.txt", cddtest.SENTINEL_TEXT)),
            names=(RECEIPT, "cron"),
            setup=lambda ws: self.link(ws, "cron", ws.outside))

    def files_symlink_through_tree_link(self, command):
        def setup(ws):
            os.makedirs(self.outside(ws, "libs"))
            os.symlink("libcudnn.so.8.5.0",
                       self.outside(ws, "libs/libcudnn.so.8"))
            self.link(ws, "cron", self.outside(ws, "libs"))
        self.edited(command, lambda ws, d: d["files"].append(
            {"path": "cron/libcudnn.so.8", "role": "symlink",
             "symlink": "libcudnn.so.8.5.0"}),
            names=(RECEIPT, "cron"), setup=setup)

    def created_dir_through_tree_link(self, command):
        def setup(ws):
            os.makedirs(self.outside(ws, "emptydir"))
            self.link(ws, "cron", ws.outside)
        self.edited(command,
                    lambda ws, d: d["created_dirs"].append("cron/emptydir"),
                    names=(RECEIPT, "cron"), setup=setup)

    def created_dir_state_folder(self, command):
        self.edited(command, lambda ws, d: d["created_dirs"].append(STATE))

    def backed_up_dotdot(self, command):
        self.edited(command,
                    lambda ws, d: d["backed_up"].append("../outside/sentinel.txt"))

    def backed_up_absolute(self, command):
        self.edited(command, lambda ws, d: d["backed_up"].append(
            os.path.join(ws.outside, "sentinel.txt")))

    def backed_up_state_file(self, command):
        def setup(ws):
            txn = cddtest.read_receipt(ws.tree)["transaction"]
            put(ws.path(BACKUP + "/" + txn + "/" + LOG), b"{}\n")
        self.edited(command, lambda ws, d: d["backed_up"].append(LOG),
                    setup=setup)

    def transaction_is_a_path(self, command):
        # backup/<transaction>/... with a transaction that is a path.
        def setup(ws):
            put(ws.path(BACKUP + "/a/b/include/cudnn_extra.h"), b"/* x */\n")

        def edit(ws, d):
            d["transaction"] = "a/b"
            d["backed_up"].append("include/cudnn_extra.h")
        self.edited(command, edit, setup=setup)

    def transaction_dotdot(self, command):
        def edit(ws, d):
            d["transaction"] = "../../../outside"
            d["backed_up"].append("sentinel.txt")
        self.edited(command, edit)


UNINSTALL_AND_READ = ("uninstall",) + READING
generate(ReceiptPaths, {
    "files_absolute": (UNINSTALL_AND_READ, "files_absolute"),
    "files_dotdot": (UNINSTALL_AND_READ, "files_dotdot"),
    "files_in_state_folder": (UNINSTALL_AND_READ, "files_in_state_folder"),
    "files_through_tree_link": (UNINSTALL_AND_READ + ("install",),
                                "files_through_tree_link"),
    "files_symlink_through_tree_link": (UNINSTALL_AND_READ,
                                        "files_symlink_through_tree_link"),
    "created_dir_through_tree_link": (("uninstall",),
                                      "created_dir_through_tree_link"),
    "created_dir_state_folder": (("uninstall",), "created_dir_state_folder"),
    "backed_up_dotdot": (("uninstall", "status"), "backed_up_dotdot"),
    "backed_up_absolute": (("uninstall", "status"), "backed_up_absolute"),
    "backed_up_state_file": (("uninstall",), "backed_up_state_file"),
    "transaction_is_a_path": (("uninstall",), "transaction_is_a_path"),
    "transaction_dotdot": (("uninstall",), "transaction_dotdot"),
})


# ---------------------------------------------------------------------------
# 8. Escaping: an untrusted string never reaches the terminal raw
# ---------------------------------------------------------------------------

EVIL_NAME = "tree\nforged line\x1b[31m"


class Escaping(TamperCase):

    def assertOneEscapedLine(self, res):
        lines = res.err.splitlines()
        self.assertEqual(len(lines), 1, "one line on stderr: %r" % res.err)
        self.assertNotIn("\x1b", res.err, "a raw ESC reached stderr")
        self.assertIn("\\n", lines[0])
        self.assertIn("\\x1b", lines[0])
        return lines[0]

    def test_missing_tree_with_newline_and_esc_in_its_name(self):
        root = os.path.join(self.scratch("evil"), EVIL_NAME)
        res = run(["--quiet", "status", "--cuda-root", root])
        self.assertEqual(res.rc, 4, res.err)
        self.assertOneEscapedLine(res)

    def test_tampered_state_in_a_tree_with_newline_and_esc_in_its_name(self):
        ws = self.workspace()
        evil = os.path.join(ws.dir, EVIL_NAME)
        os.rename(ws.tree, evil)
        os.makedirs(os.path.join(evil, RECEIPT))   # not a regular file
        before = cddtest.snapshot(evil, IGNORE_LOCK)
        res = run(["--quiet", "uninstall", "--cuda-root", evil])
        self.assertEqual(res.rc, 3, res.err)
        line = self.assertOneEscapedLine(res)
        self.assertIn("receipt.json", line)
        self.assertSameTree(before, cddtest.snapshot(evil, IGNORE_LOCK))

    def test_manifest_path_with_controls(self):
        # A manifest naming a file "include/cudnn\x1b[2J\n.h": refused,
        # and the refusal is one line whatever it quotes.
        folder = self.scratch("m")
        m = self.fx.manifest_variant(
            os.path.join(folder, "m.json"),
            lambda d: d["files"][0].__setitem__(
                "path", "include/cudnn\x1b[2J\nforged.h"))
        ws = self.workspace()
        before = ws.snap(())
        res = run(["--quiet"] + install_args(ws, self.fx, m))
        self.assertEqual(res.rc, 3, res.err)
        lines = res.err.splitlines()
        self.assertEqual(len(lines), 1, "one line on stderr: %r" % res.err)
        self.assertNotIn("\x1b", res.err, "a raw ESC reached stderr")
        self.assertSameTree(before, ws.snap(()))

    def test_check_detail_with_a_hostile_link_target(self):
        # Someone retargets an installed link to a name with an ESC and a
        # newline; status --check reports it, on lines of its own.
        ws = self.workspace()
        self.plain(ws)
        link = ws.path("lib64/libcudnn.so")
        os.unlink(link)
        os.symlink("libcudnn\x1b[31m.so\nforged: all good", link)
        res = run(["status", "--check"] + ws.target_args)
        self.assertEqual(res.rc, 1, res.err)
        self.assertNotIn("\x1b", res.err, "a raw ESC reached stderr")
        self.assertIn("\\x1b", res.err)
        for line in res.err.splitlines():
            self.assertFalse(line.startswith("forged"),
                             "a link target forged a line: %r" % res.err)

    def test_json_message_is_one_line_too(self):
        root = os.path.join(self.scratch("evil"), EVIL_NAME)
        res = run(["--json", "status", "--cuda-root", root])
        doc = cddtest.parse_one_object(res.out)
        msg = doc["error"]["message"]
        self.assertNotIn("\n", msg)
        self.assertNotIn("\x1b", msg)
        self.assertIn("\\x1b", msg)


# ---------------------------------------------------------------------------
# 9. The lock's holder message: the real holder, or "unknown"
# ---------------------------------------------------------------------------

HOLDER = r"""
import fcntl, os, struct, sys, time
path, how, content, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
if how == "ofd":
    # struct flock on Linux: l_type, l_whence (short), l_start, l_len
    # (off_t), l_pid (pid_t), padded.
    fl = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, fl)
else:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
def write(text):
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode(), 0)
if content != "-":
    write(content.replace("SELF", str(os.getpid())) + "\n")
sys.stdout.write("locked\n")
sys.stdout.flush()
if delay > 0:
    time.sleep(delay)
    write("%d\n" % os.getpid())
sys.stdin.read()
"""


class LockHolderMessage(TamperCase):
    """Another process holds the tree's lock; the loser's message must name
    that process or say it does not know - never pid 0, never the pid
    of a process that exited, never an unrelated live process."""

    def hold(self, ws, how, content, delay=0.0):
        path = ws.path(LOCK)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        p = subprocess.Popen([sys.executable, "-c", HOLDER, path, how, content,
                              str(delay)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(self._release, p)
        line = p.stdout.readline()
        self.assertEqual(line, b"locked\n", "the holder took the lock")
        return p

    @staticmethod
    def _release(p):
        if p.poll() is None:
            p.stdin.close()
            p.wait(timeout=30)
        p.stdout.close()

    def dead_pid(self):
        p = subprocess.Popen(["true"])
        p.wait()
        return p.pid

    def loser(self, ws):
        res = run(["--quiet", "--json"] + install_args(ws, self.fx))
        self.assertEqual(res.rc, 4, res.err)
        doc = cddtest.parse_one_object(res.out)
        self.assertEqual(doc["error"]["code"], "LOCKED")
        lines = res.err.splitlines()
        self.assertEqual(len(lines), 1, res.err)
        return lines[0]

    def assertNamesOnly(self, line, real_pid, wrong=()):
        line = line.split(LOCK + ":", 1)[-1]   # the message, not the path
        self.assertNotIn("pid 0", line)
        self.assertNotIn("(0)", line)
        for w in wrong:
            self.assertNotRegex(line, r"\b%d\b" % w,
                                "names pid %d, which does not hold the lock" % w)
        self.assertTrue(str(real_pid) in line or "unknown" in line,
                        "names neither the holder %d nor 'unknown': %s"
                        % (real_pid, line))

    def test_holder_has_not_written_its_pid(self):
        for how in ("posix", "ofd"):
            with self.subTest(how=how):
                ws = self.workspace(how)
                p = self.hold(ws, how, "-")
                line = self.loser(ws)
                self.assertNamesOnly(line, p.pid)
                if how == "posix" and os.path.exists("/proc/locks"):
                    # The kernel lists a classic lock's owner: named truly.
                    self.assertRegex(line, r"\bpid %d\b" % p.pid)

    def test_stale_pid_of_an_exited_process(self):
        for how in ("posix", "ofd"):
            with self.subTest(how=how):
                ws = self.workspace(how)
                stale = self.dead_pid()
                p = self.hold(ws, how, str(stale))
                self.assertNamesOnly(self.loser(ws), p.pid, wrong=(stale,))

    def test_pid_of_an_unrelated_live_process(self):
        # The file names a live process that does not hold the lock (a pid
        # reused since): it must not be named.
        for how in ("posix", "ofd"):
            with self.subTest(how=how):
                ws = self.workspace(how)
                other = subprocess.Popen(["sleep", "60"])
                self.addCleanup(other.wait)
                self.addCleanup(other.kill)
                p = self.hold(ws, how, str(other.pid))
                self.assertNamesOnly(self.loser(ws), p.pid, wrong=(other.pid,))

    def test_holder_writes_its_pid_late(self):
        # The loser re-reads briefly: it sees the pid once written, or says
        # it does not know; never the stale one it read first.
        for how in ("posix", "ofd"):
            with self.subTest(how=how):
                ws = self.workspace(how)
                stale = self.dead_pid()
                p = self.hold(ws, how, str(stale), delay=0.2)
                self.assertNamesOnly(self.loser(ws), p.pid, wrong=(stale,))

    def test_holder_named_when_it_wrote_its_pid(self):
        for how in ("posix", "ofd"):
            with self.subTest(how=how):
                ws = self.workspace(how)
                p = self.hold(ws, how, "SELF")
                line = self.loser(ws)
                self.assertRegex(line, r"\bpid %d\b" % p.pid)


if __name__ == "__main__":
    cddtest.main()
