"""Draws the chart's Grafana dashboard from a Prometheus that scraped a real run.

Reads charts/graintune/dashboards/graintune.json, runs every panel's queries as they are written
(Grafana's $__rate_interval and the All value of the variables substituted) against the
Prometheus HTTP API over the run's time range, and draws the panels with their titles, units and
legends into one PNG. Prints, per panel, what each query returned, so the picture's figures can
be checked against the run's own output.

usage: render.py --prometheus URL --start UNIX --end UNIX --dashboard FILE --out PNG [--caption TEXT]
"""
import argparse
import json
import re
import sys
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"s": "seconds", "reqps": "requests/s", "none": ""}


def query_range(prometheus, expr, start, end, step):
    params = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": step})
    with urllib.request.urlopen(f"{prometheus}/api/v1/query_range?{params}", timeout=30) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise SystemExit(f"dashboard-picture: query failed: {expr}: {body}")
    return body["data"]["result"]


def substitute(expr, rate_interval):
    expr = expr.replace("$__rate_interval", rate_interval)
    return re.sub(r"\$[a-z_]+", ".*", expr)


def legend(fmt, labels):
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt) or "value"


def panels_of(dashboard):
    for p in dashboard["panels"]:
        if p.get("type") == "row":
            yield from (q for q in p.get("panels", []))
        else:
            yield p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prometheus", required=True)
    ap.add_argument("--start", type=float, required=True)
    ap.add_argument("--end", type=float, required=True)
    ap.add_argument("--dashboard", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rate-interval", default="10s")
    ap.add_argument("--caption", default="")
    args = ap.parse_args()
    with open(args.dashboard) as f:
        dashboard = json.load(f)
    panels = list(panels_of(dashboard))
    step = max(1.0, (args.end - args.start) / 300)
    cols = 3
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, panels):
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "none")
        print(f"== {panel['title']}")
        for target in panel["targets"]:
            expr = substitute(target["expr"], args.rate_interval)
            for series in query_range(args.prometheus, expr, args.start, args.end, step):
                points = [(float(t) - args.start, float(v)) for t, v in series["values"] if v not in ("NaN", "+Inf", "-Inf")]
                if not points:
                    continue
                name = legend(target.get("legendFormat", ""), series["metric"])
                xs, ys = zip(*points)
                ax.step(xs, ys, where="post", label=name)
                print(f"   {name}: last {ys[-1]:.4g}, min {min(ys):.4g}, max {max(ys):.4g} ({len(ys)} points)")
        ax.set_title(panel["title"])
        ax.set_xlabel("seconds into the run")
        if UNITS.get(unit, unit):
            ax.set_ylabel(UNITS.get(unit, unit))
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="best")
        else:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    if args.caption:
        fig.suptitle(args.caption, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
