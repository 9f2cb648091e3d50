#!/usr/bin/python
# -*- coding: utf-8 -*-
# The cudnn_deploy.fleet.cudnn module: cudnn-deploy's --json report turned
# into an Ansible result. Python standard library only (and AnsibleModule).
"""Ansible module wrapping cudnn-deploy --json."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: cudnn
short_description: Install, verify or uninstall NVIDIA cuDNN with cudnn-deploy
version_added: "0.1.0"
description:
  - Runs the cudnn-deploy binary on the managed host with C(--json) and
    returns its report. The tool checks the archive against a pinned
    manifest, installs in one transaction, verifies, and uninstalls exactly
    what it put.
  - Check mode runs the tool with C(--dry-run): nothing changes and nothing
    is downloaded (the plan names the download instead). Diff mode returns
    the tree's cuDNN files before and after, and the plan with the
    download it would make.
options:
  state:
    description:
      - C(present) installs (and, with I(verify), verifies);
        C(absent) uninstalls, restoring what the install replaced;
        C(verified) only verifies (never changes anything).
    type: str
    choices: [present, absent, verified]
    default: present
  cuda:
    description: CUDA toolkit version C(vX.Y) (C($CUDA_PATH_VX_Y), else the
      default root). One of I(cuda), I(cuda_root), I(prefix) is required.
    type: str
  cuda_root:
    description: A CUDA toolkit tree.
    type: path
  prefix:
    description: A conda environment or other prefix.
    type: path
  manifest:
    description: Manifest file on the managed host, or the name of a shipped
      one.
    type: str
  archive:
    description: The cuDNN archive on the managed host (else downloaded
      through the cache).
    type: path
  url:
    description: URLs to download the archive from, tried in order.
    type: list
    elements: str
  sha256:
    description: Pin of the archive's sha256.
    type: str
  cache_dir:
    description: Download cache on the managed host.
    type: path
  profile:
    description:
      - What C(state=present) installs - C(runtime) the libraries only,
        C(dev) also headers and import libraries, C(full) also static
        libraries (the tool's default). Recorded in the receipt.
    type: str
    choices: [runtime, dev, full]
  verify:
    description: Verify after installing (C(state=present)).
    type: bool
    default: true
  binary:
    description: Path of cudnn-deploy on the managed host (default from
      PATH).
    type: path
  extra_args:
    description: More arguments for cudnn-deploy (for instance
      C(["--with", "zlibwapi"])).
    type: list
    elements: str
    default: []
author:
  - cudnn-deploy maintainers
'''

EXAMPLES = r'''
- name: cuDNN 8.5 in CUDA 11.6, from a bundle mirror
  cudnn_deploy.fleet.cudnn:
    cuda: v11.6
    manifest: /etc/cudnn-deploy/cudnn-8.5.0.96-cuda11-windows-x86_64.json
    extra_args: [--with, zlibwapi]
  environment:
    CUDNN_DEPLOY_MIRROR: http://mirror.example/cudnn/

- name: remove it again
  cudnn_deploy.fleet.cudnn:
    cuda_root: /usr/local/cuda-11.6
    state: absent
'''

RETURN = r'''
changed:
  description: Whether the tree changed (the tool's C(changed)); in check
    mode, whether it would.
  type: bool
  returned: always
report:
  description: cudnn-deploy's JSON report (command, ok, changed, exit_code,
    target, checks, plan, error).
  type: dict
  returned: when the tool ran
rc:
  description: The tool's exit code (0 ok, 1 a check failed, 2 usage,
    3 rejected input, 4 environment).
  type: int
  returned: when the tool ran
msg:
  description: What happened, or the tool's own error message.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cudnn_deploy.fleet.plugins.module_utils.cli import (
    run_json, target_args)

# Plan actions that change the tree (install and uninstall plans).
CHANGING = ("new", "replace", "remove", "restore")


def command_line(module, binary):
    p = module.params
    state = p["state"]
    argv = [binary, "--json"]
    if state == "present":
        argv += ["install"] + target_args(p)
        if p["manifest"]:
            argv += ["--manifest", p["manifest"]]
        if p["archive"]:
            argv += ["--archive", p["archive"]]
        for u in p["url"] or []:
            argv += ["--url", u]
        if p["sha256"]:
            argv += ["--sha256", p["sha256"]]
        if p["cache_dir"]:
            argv += ["--cache-dir", p["cache_dir"]]
        if p["profile"]:
            argv += ["--profile", p["profile"]]
        if not p["verify"]:
            argv.append("--no-verify")
        if module.check_mode:
            argv.append("--dry-run")
    elif state == "absent":
        argv += ["uninstall"] + target_args(p)
        if module.check_mode:
            argv.append("--dry-run")
    else:
        argv += ["verify"] + target_args(p)
        if p["manifest"]:
            argv += ["--manifest", p["manifest"]]
    return argv + list(p["extra_args"] or [])


# What each plan action says about a path before and after the operation:
# there before, there after, and whether its contents change.
BEFORE = ("replace", "unchanged", "remove", "restore", "modified")
AFTER = ("new", "replace", "unchanged", "restore")


def plan_diff(report):
    """Ansible's diff of the tree's cuDNN files: before/after lists (the
    callback shows them as a unified diff; a replaced or restored file is a
    changed line) and, as 'prepared', the changing plan lines and the
    download a check-mode install would make (the tool's dry run names it
    and downloads nothing)."""
    plan = report.get("plan") or []
    before, after = [], []
    for i in plan:
        a, p = i.get("action"), i.get("path", "?")
        if a in BEFORE:
            before.append(p)
        if a in AFTER:
            after.append(p + (" (%sd)" % a if a in ("replace", "restore")
                              else ""))
    lines = ["%-9s %s" % (i.get("action", "?"), i.get("path", "?"))
             for i in plan if i.get("action") in CHANGING]
    dl = report.get("download")
    if isinstance(dl, dict) and dl.get("url"):
        size = dl.get("size")
        lines.append("download  %s%s" % (
            dl["url"], " (%s bytes)" % size if size is not None else ""))
    target = report.get("target") or "tree"
    return {"before": "\n".join(sorted(before)) + ("\n" if before else ""),
            "after": "\n".join(sorted(after)) + ("\n" if after else ""),
            "before_header": "%s (before)" % target,
            "after_header": "%s (after)" % target,
            "prepared": "\n".join(lines) + ("\n" if lines else "")}


def failed_checks(report):
    return ["%s: %s" % (c.get("name"), c.get("detail"))
            for c in report.get("checks") or [] if c.get("status") == "fail"]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            state=dict(type="str", default="present",
                       choices=["present", "absent", "verified"]),
            cuda=dict(type="str"),
            cuda_root=dict(type="path"),
            prefix=dict(type="path"),
            manifest=dict(type="str"),
            archive=dict(type="path"),
            url=dict(type="list", elements="str"),
            sha256=dict(type="str"),
            cache_dir=dict(type="path"),
            profile=dict(type="str", choices=["runtime", "dev", "full"]),
            verify=dict(type="bool", default=True),
            binary=dict(type="path"),
            extra_args=dict(type="list", elements="str", default=[]),
        ),
        mutually_exclusive=[("cuda", "cuda_root", "prefix")],
        required_one_of=[("cuda", "cuda_root", "prefix")],
        supports_check_mode=True,
    )
    binary = module.params["binary"] or module.get_bin_path("cudnn-deploy",
                                                            required=True)
    argv = command_line(module, binary)
    rc, report, err = run_json(module, argv)
    state = module.params["state"]
    if state == "verified":
        changed = False
    elif module.check_mode:
        # A dry run that would download has no plan yet (the archive is not
        # read): it would change the tree all the same.
        download = report.get("download") or {}
        changed = (any(i.get("action") in CHANGING
                       for i in report.get("plan") or []) or
                   (bool(download) and not download.get("cached")))
    else:
        changed = bool(report.get("changed"))
    result = dict(changed=changed, report=report, rc=rc, cmd=argv)
    if module._diff and state != "verified":
        result["diff"] = plan_diff(report)
    if rc != 0:
        error = report.get("error") or {}
        msg = error.get("message")
        if not msg:
            bad = failed_checks(report)
            msg = "; ".join(bad) if bad else "cudnn-deploy exited %d" % rc
        module.fail_json(msg=msg, **result)
    if state == "present":
        result["msg"] = ("would install" if module.check_mode
                         else "installed" if changed else "already installed")
    elif state == "absent":
        result["msg"] = ("would uninstall" if module.check_mode
                         else "uninstalled" if changed else "nothing to uninstall")
    else:
        result["msg"] = "verified"
    module.exit_json(**result)


if __name__ == "__main__":
    main()
