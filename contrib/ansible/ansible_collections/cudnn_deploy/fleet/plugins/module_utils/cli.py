# -*- coding: utf-8 -*-
# What the collection's modules share about running cudnn-deploy: the target
# options and the one JSON report the tool prints with --json.
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json


def target_args(p):
    """The target options of module parameters p (exactly one is set)."""
    if p["cuda"]:
        return ["--cuda", p["cuda"]]
    if p["cuda_root"]:
        return ["--cuda-root", p["cuda_root"]]
    return ["--prefix", p["prefix"]]


def run_json(module, argv):
    """Run argv; (rc, report, stderr). Fails the task when stdout is not
    the tool's JSON report."""
    rc, out, err = module.run_command(argv)
    try:
        return rc, json.loads(out), err
    except ValueError:
        module.fail_json(msg="cudnn-deploy gave no JSON report: %s"
                         % (err.strip() or out.strip() or "no output"),
                         rc=rc, cmd=argv, stderr=err)
