#!/usr/bin/env python3
"""Writes the deep and huge inputs scripts/fuzz.sh runs once through each fuzz target.

They are the bodies the size and depth limits exist for (admission.h: 3 MiB bodies, 512 levels;
mounted_config.h: 256 KiB configs; yaml_json.h: 512 levels, 200,000 nodes), at both sides of
each limit, and the shapes whose cost must stay linear: a script with tens of thousands of
sites, a pod with 100,000 containers. They are made here rather than kept in the repository
(several MiB), and they are not mutated: libFuzzer's mutations of a MiB-sized input cost far
more than they find, so the fuzzing runs use a smaller -max_len.

Usage: make_huge_seeds.py OUT_DIR  (writes OUT_DIR/<target>/<name>)
"""

import json
import os
import sys


def review(obj, ns="default", kind="Pod", group=""):
    return {
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "u-huge",
            "kind": {"group": group, "version": "v1", "kind": kind},
            "operation": "CREATE",
            "namespace": ns,
            "object": obj,
        },
    }


def pod(containers, annotations=None):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "huge", "annotations": annotations or {}},
        "spec": {
            "nodeSelector": {
                "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                "cloud.google.com/gke-tpu-topology": "4x8",
            },
            "containers": containers,
        },
    }


def trainer(args=None, command=None):
    c = {
        "name": "maxtext",
        "image": "maxtext",
        "command": command or ["python3", "-m", "MaxText.train"],
        "resources": {"limits": {"google.com/tpu": 4}},
    }
    if args is not None:
        c["args"] = args
    return c


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def with_placeholder(value_json):
    """A review whose trainer's args are replaced by raw JSON text (nesting json.dumps cannot
    write: Python's encoder recurses)."""
    text = dumps(review(pod([trainer(args="PLACEHOLDER")])))
    return text.replace('"PLACEHOLDER"', value_json, 1)


def nested_arrays(depth, inner='"grain_worker_count=-1"'):
    return "[" * depth + inner + "]" * depth


def admission_seeds():
    mib = 1024 * 1024
    seeds = {
        # 600 and 131,072 levels: past the limit, a 400 read in one pass; 400 levels: under it.
        "deep-arrays-600.json": with_placeholder(nested_arrays(600)),
        "deep-arrays-131072.json": with_placeholder(nested_arrays(131072)),
        "deep-arrays-400.json": with_placeholder(nested_arrays(400)),
        "deep-objects-600.json": with_placeholder(
            '{"a":' * 600 + '"grain_worker_count=-1"' + "}" * 600),
        # 1 MiB of {} as args and as containers: every one is looked at, each costs O(1).
        "args-of-empty-objects.json": with_placeholder(
            "[" + ",".join(["{}"] * (mib // 3)) + ',"grain_worker_count=-1"]'),
        "containers-of-empty-objects.json": dumps(
            review(pod([trainer(["grain_worker_count=-1"])] + [{}] * 100000))),
        # 40,000 sites in one bash -c script (about 1 MiB): one rebuild of the string.
        "script-with-40000-sites.json": dumps(review(pod([trainer(command=[
            "bash", "-c",
            "python3 -m MaxText.train base.yml " + "grain_worker_count=-1 " * 40000])]))),
        # 1,500 trainers, each with a site: past the 1,000-site budget.
        "1500-trainers.json": dumps(review(pod(
            [dict(trainer(["grain_worker_count=-1"]), name="t%d" % i) for i in range(1500)]))),
        # 10,000 graintune.dev/ annotations, each a warning (12 are kept).
        "10000-bad-annotations.json": dumps(review(pod(
            [trainer(["grain_worker_count=-1"])],
            {"graintune.dev/worker-memory-%d" % i: "x" * 40 for i in range(10000)}))),
        # One arg just under the 3 MiB body limit, and a body one byte over it.
        "arg-near-body-limit.json": dumps(review(pod([trainer(
            ["grain_worker_count=-1", "x" * (3 * mib - 2048)])]))),
        "over-body-limit.json": " " * (3 * mib + 1),
    }
    # Warnings quote annotation values and are cut at 600 bytes: the cut must not split a
    # multi-byte character, or the answer is not valid UTF-8 JSON.
    for lead in range(4):
        seeds["multibyte-warning-%d.json" % lead] = dumps(review(pod(
            [trainer(["grain_worker_count=-1"])],
            {"graintune.dev/tuning-key": "k" * lead + "é" * 400})))
    return seeds


def yaml_seeds():
    kib = 1024
    return {
        "open-brackets-256k.yml": "x: " + "[" * (256 * kib - 3),
        "open-brackets-1m.yml": "[" * (1024 * kib),
        "nested-maps-200k.yml": "a: " + "{a: " * (200 * kib // 4),
        "nested-blocks-600.yml":
            "".join("  " * i + "a:\n" for i in range(600)) + "  " * 600 + "b: 1\n",
        "long-integer-200k.yml": "grain_worker_count: " + "1" * (200 * kib) + "\n",
        "long-float-200k.yml": "x: 0." + "1" * (200 * kib) + "\n",
        "over-config-limit.yml": "grain_worker_count: -1\n" + "#" * (256 * kib) + "\n",
        "billion-laughs.yml": "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            "%s: &%s [%s]\n" % (n, n, ", ".join(["*" + p] * 9))
            for p, n in zip("abcdefgh", "bcdefghi")),
        "50k-keys.yml": "".join("k%d: %d\n" % (i, i) for i in range(50000)),
    }


def shell_seeds():
    mib = 1024 * 1024
    return {
        "40000-sites.sh": "python3 -m MaxText.train " + "grain_worker_count=-1 " * 40000,
        "one-quoted-word-1m.sh": "x='" + "a" * mib + "'",
        "unterminated-quote-1m.sh": 'x="' + "\\\"a" * (mib // 3),
        "deep-substitution-100k.sh": "x=" + "$(" * 100000 + ")" * 100000,
        "backslashes-1m.sh": "\\" * mib,
    }


def metrics_seeds():
    mib = 1024 * 1024
    return {
        "deep-arrays-100k.jsonl":
            '{"step":1,"perf/step_time_seconds":2,"x":' + nested_arrays(100000, "1") + "}",
        "long-line-1m.jsonl": '{"step":1,"perf/step_time_seconds":2,"x":"' + "a" * mib + '"}',
        "long-number.jsonl": '{"step":1' + "0" * 100000 + ',"perf/step_time_seconds":2}',
    }


def steps_seeds():
    many = ",".join('{"step":%d,"step_time_seconds":1}' % i for i in range(200000))
    return {
        "deep-arrays-100k.json": '{"steps":[],"x":' + nested_arrays(100000, "1") + "}",
        "steps-200k.json": '{"steps":[' + many + "]}",
        "long-uid.json": '{"pod_uid":"' + "u" * (1024 * 1024) + '","steps":[]}',
    }


def quantity_seeds():
    return {
        "digits-1m.txt": "1" * (1024 * 1024),
        "fraction-1m.txt": "0." + "0" * (1024 * 1024) + "1Ki",
        "exponent-overflow.txt": "1e99999999999999999999",
    }


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for target, seeds in [("admission", admission_seeds()), ("yaml_config", yaml_seeds()),
                          ("shell_words", shell_seeds()), ("metrics_line", metrics_seeds()),
                          ("quantity", quantity_seeds()), ("steps_document", steps_seeds())]:
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for name, text in seeds.items():
            with open(os.path.join(out, target, name), "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
