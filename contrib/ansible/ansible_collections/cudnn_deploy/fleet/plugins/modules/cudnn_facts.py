#!/usr/bin/python
# -*- coding: utf-8 -*-
# The cudnn_deploy.fleet.cudnn_facts module: what cudnn-deploy's `status
# --json` and `verify --json` say about a tree, as Ansible facts. It changes
# nothing the tree holds (verify refreshes only its own record,
# .cudnn-deploy/verified.json), so check mode runs it as it is. Python standard
# library only (and AnsibleModule).
"""Ansible facts from cudnn-deploy status and verify."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: cudnn_facts
short_description: Facts about the cuDNN that cudnn-deploy installed in a tree
version_added: "0.2.0"
description:
  - Runs C(cudnn-deploy status --json) and, unless I(verify_level) is
    empty, C(cudnn-deploy verify --json) on the managed host and sets the
    fact C(cudnn) - the installed release, the install profile, the CUDA
    tree, whether the files still match the receipt, and the verify
    outcome with the GPU fit where verify reports it (level C(gpu)).
  - Changes nothing the tree holds (the verify it runs refreshes only the
    tree's verify record, C(.cudnn-deploy/verified.json)); runs in check
    mode too.
options:
  cuda:
    description: CUDA toolkit version C(vX.Y). One of I(cuda), I(cuda_root),
      I(prefix) is required.
    type: str
  cuda_root:
    description: A CUDA toolkit tree.
    type: path
  prefix:
    description: A conda environment or other prefix.
    type: path
  manifest:
    description: Manifest for verify (default the tool's).
    type: str
  verify_level:
    description: C(files), C(load), C(gpu) or C(bench); C("") to skip
      verify (status only).
    type: str
    default: files
  binary:
    description: Path of cudnn-deploy on the managed host (default from
      PATH).
    type: path
author:
  - cudnn-deploy maintainers
'''

EXAMPLES = r'''
- name: What is installed
  cudnn_deploy.fleet.cudnn_facts:
    cuda_root: /usr/local/cuda-11.8
    verify_level: gpu

- name: Fail the play where cuDNN does not fit the GPU
  ansible.builtin.assert:
    that: ansible_facts.cudnn.verify.ok and ansible_facts.cudnn.verify.gpu_fit != 'fail'
'''

RETURN = r'''
ansible_facts:
  description: The fact C(cudnn).
  returned: always
  type: dict
  contains:
    cudnn:
      description:
        - installed (bool), product, version (the cuDNN release), platform,
          layout, profile (runtime, dev or full), omitted (archive entries
          the profile left out), cuda_major (what the archive was built
          for), cuda_version (the tree's, at install), installed_at,
          transaction, archive, archive_sha256, archive_pinned, files_ok
          (every file matches the receipt), interrupted (a journal waits
          for recover), target, verified (the last verify recorded for
          this receipt - verified_at, tool_version, level, outcome, layers
          with their counts - or null; taken before this run's verify).
        - verify - ok, exit_code, level, failed (the failed checks as
          "name: detail"), cudnn_version, driver_release,
          driver_cuda_version, gpu, gpu_fit (pass, warn, fail or skip:
          verify's gpu.arch check; null when not reported) and
          gpu_fit_detail. Null when verify_level is empty.
      type: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.cudnn_deploy.fleet.plugins.module_utils.cli import (
    run_json, target_args)

STATUS_KEYS = ("product", "version", "platform", "layout", "profile",
               "omitted", "cuda_major", "cuda_version", "installed_at",
               "transaction", "archive", "archive_sha256", "archive_pinned",
               "target", "verified")
VERIFY_KEYS = ("level", "cudnn_version", "driver_release",
               "driver_cuda_version", "gpu")


def check(report, name):
    for c in report.get("checks") or []:
        if c.get("name") == name:
            return c
    return None


def status_facts(report):
    facts = {"installed": bool(report.get("installed"))}
    for k in STATUS_KEYS:
        facts[k] = report.get(k)
    files = check(report, "files")
    facts["files_ok"] = (files.get("status") == "pass") if files else None
    tx = check(report, "transaction")
    facts["interrupted"] = bool(tx and tx.get("status") == "fail")
    return facts


def verify_facts(rc, report):
    v = {"ok": bool(report.get("ok")), "exit_code": rc,
         "failed": ["%s: %s" % (c.get("name"), c.get("detail"))
                    for c in report.get("checks") or []
                    if c.get("status") == "fail"]}
    for k in VERIFY_KEYS:
        v[k] = report.get(k)
    fit = check(report, "gpu.arch")
    v["gpu_fit"] = fit.get("status") if fit else None
    v["gpu_fit_detail"] = fit.get("detail") if fit else None
    err = report.get("error")
    if err:
        v["error"] = err.get("message")
    return v


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cuda=dict(type="str"),
            cuda_root=dict(type="path"),
            prefix=dict(type="path"),
            manifest=dict(type="str"),
            verify_level=dict(type="str", default="files",
                              choices=["", "files", "load", "gpu", "bench"]),
            binary=dict(type="path"),
        ),
        mutually_exclusive=[("cuda", "cuda_root", "prefix")],
        required_one_of=[("cuda", "cuda_root", "prefix")],
        supports_check_mode=True,
    )
    p = module.params
    binary = p["binary"] or module.get_bin_path("cudnn-deploy", required=True)
    argv = [binary, "--json", "status"] + target_args(p)
    rc, report, _ = run_json(module, argv)
    # 0: installed and intact; 1: files differ (still facts); else the
    # tool could not read the tree: that is an error, not a fact.
    if rc not in (0, 1):
        module.fail_json(msg=(report.get("error") or {}).get(
            "message", "cudnn-deploy status exited %d" % rc), rc=rc, cmd=argv)
    facts = status_facts(report)
    facts["verify"] = None
    if p["verify_level"] and facts["installed"]:
        vargv = [binary, "--json", "verify"] + target_args(p) + [
            "--level", p["verify_level"]]
        if p["manifest"]:
            vargv += ["--manifest", p["manifest"]]
        vrc, vreport, _ = run_json(module, vargv)
        facts["verify"] = verify_facts(vrc, vreport)
    module.exit_json(changed=False, ansible_facts={"cudnn": facts})


if __name__ == "__main__":
    main()
