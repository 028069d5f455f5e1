"""Hostile requests against graintune-webhook, one fresh process per class.

For each class of hostile input the webhook must survive, starts the given graintune-webhook
binary (standalone, TLS on loopback), sends the input, and records what happened: the HTTP
status (or none), the time to answer, whether the process is still alive, its peak RSS
(VmHWM), and for the slow classes the worst /healthz latency seen while the request ran. The
same classes run against every binary given, side by side, so a build before and after a change
can be compared in one run. Usage:

  hostile.py --cert C --key K --cli NAME=GRAINTUNE_CLI ... NAME=WEBHOOK_BINARY ...

Prints a table and one JSON line. Standard library only.
"""
import argparse
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

MARKER_JOB = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
    "spec": {"template": {"spec": {
        "nodeSelector": {"node.kubernetes.io/instance-type": "ct6e-standard-4t"},
        "containers": [{"name": "t", "image": "maxtext",
                        "command": ["python3", "-m", "MaxText.train", "base.yml", "grain_worker_count=-1"],
                        "resources": {"limits": {"google.com/tpu": "4"}}}]}}}}


def review(obj, **request_overrides):
    request = {"uid": "u-1", "kind": {"group": "batch", "version": "v1", "kind": "Job"},
               "operation": "CREATE", "namespace": "ml", "object": obj}
    request.update(request_overrides)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Webhook:
    """A graintune-webhook process; stopped (SIGKILL if need be) when the block ends."""

    def __init__(self, binary, cert, key, probe_port):
        self.port = free_port()
        self.probe_port = probe_port
        args = [binary, "--standalone", "--no-exporter", "--tls-cert-file", cert, "--tls-key-file", key,
                "--bind-address", "127.0.0.1", "--port", str(self.port), "--threads", "2"]
        if probe_port:
            args += ["--health-port", str(probe_port), "--shutdown-delay", "0"]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        self.ctx = ssl.create_default_context(cafile=cert)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.health(self.port, tls=True, timeout=2)[0] == 200:
                return
            time.sleep(0.05)
        raise RuntimeError("webhook did not start: " + binary)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def alive(self):
        return self.proc.poll() is None

    def status_mb(self, field):
        """A /proc/PID/status memory field (VmHWM: peak RSS, VmRSS: now) in MB."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def hwm_mb(self):
        return self.status_mb("VmHWM")

    def rss_mb(self):
        return self.status_mb("VmRSS")

    def connection(self, timeout):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)

    def post(self, body, timeout=60):
        """(status or None, seconds, response body)."""
        start = time.perf_counter()
        try:
            c = self.connection(timeout)
            c.request("POST", "/mutate", body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            c.close()
            return r.status, time.perf_counter() - start, data
        except (OSError, http.client.HTTPException):
            return None, time.perf_counter() - start, b""

    def health(self, port, tls, timeout=10):
        start = time.perf_counter()
        try:
            if tls:
                c = http.client.HTTPSConnection("127.0.0.1", port, context=self.ctx, timeout=timeout)
            else:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            c.request("GET", "/healthz")
            status = c.getresponse().status
            c.close()
            return status, time.perf_counter() - start
        except (OSError, http.client.HTTPException):
            return None, time.perf_counter() - start


def outcome(data):
    try:
        response = json.loads(data)["response"]
    except (ValueError, KeyError, TypeError):
        return "-"
    if "patch" in response:
        return "mutated"
    warnings = " ".join(response.get("warnings", []))
    return "over budget" if "budget" in warnings else "allowed"


def while_probing(hook, send):
    """Runs send() while /healthz is asked every 20 ms; returns (send's result, worst probe s)."""
    result = {}
    t = threading.Thread(target=lambda: result.update(r=send()))
    t.start()
    worst = 0.0
    port, tls = (hook.probe_port, False) if hook.probe_port else (hook.port, True)
    while t.is_alive():
        status, seconds = hook.health(port, tls, timeout=30)
        worst = max(worst, seconds if status == 200 else 30.0)
        time.sleep(0.02)
    t.join()
    return result["r"], worst


def posted_at_once(hook, body, parallel):
    """`parallel` identical admissions at once: [(status, seconds, body)]."""
    results = [None] * parallel
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, hook.post(body)))
               for i in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def script_job(sites):
    job = json.loads(json.dumps(MARKER_JOB))
    c = job["spec"]["template"]["spec"]["containers"][0]
    c["command"] = ["bash", "-c", "python3 -m MaxText.train base.yml" + " grain_worker_count=-1" * sites]
    return job


def run_classes(binary, cert, key, probe_port):
    rows = {}

    def fresh():
        return Webhook(binary, cert, key, probe_port() if probe_port else 0)

    # Nesting: 131,072 arrays under the object (256 KiB).
    with fresh() as hook:
        body = json.dumps(review(MARKER_JOB)).replace(
            '"grain_worker_count=-1"]', '"grain_worker_count=-1", ' + "[" * 131072 + "]" * 131072 + "]", 1)
        status, seconds, _ = hook.post(body)
        time.sleep(0.3)
        rows["deep_131k"] = {"status": status, "seconds": seconds, "alive": hook.alive()}

    # Many -1 sites in one bash -c script.
    for sites, name in ((40000, "sites_40k"), (135000, "sites_135k")):
        with fresh() as hook:
            body = json.dumps(review(script_job(sites)))
            (status, seconds, data), worst = while_probing(hook, lambda: hook.post(body, timeout=60))
            rows[name] = {"status": status, "seconds": seconds, "outcome": outcome(data),
                          "probe_worst_s": worst, "bytes": len(body), "alive": hook.alive()}

    # 3 MB of empty objects beside a marker: one request, then two at once.
    filler = json.loads(json.dumps(MARKER_JOB))
    filler["metadata"]["labels"] = {}
    body = json.dumps(review(filler)).replace('"labels": {}', '"labels": {}, "x": [' + "{}," * 1030000 + "{}]", 1)
    for parallel, name in ((1, "empty_objects_3mb"), (2, "empty_objects_3mb_x2")):
        with fresh() as hook:
            base = hook.hwm_mb()
            results = posted_at_once(hook, body, parallel)
            rows[name] = {"status": [r[0] for r in results], "seconds": max(r[1] for r in results),
                          "outcome": outcome(results[0][2]), "peak_mb": hook.hwm_mb(),
                          "start_mb": base, "bytes": len(body)}

    # Within the value budget but as big as a body gets: 80,000 argv strings of 32 bytes beside
    # the -1 (planned in full), one request and two at once.
    big = json.loads(json.dumps(MARKER_JOB))
    big["spec"]["template"]["spec"]["containers"][0]["args"] = ["x" * 32] * 80000
    body = json.dumps(review(big))
    for parallel, name in ((1, "args_80k_strings"), (2, "args_80k_strings_x2")):
        with fresh() as hook:
            results = posted_at_once(hook, body, parallel)
            rows[name] = {"status": [r[0] for r in results], "seconds": max(r[1] for r in results),
                          "outcome": outcome(results[0][2]), "peak_mb": hook.hwm_mb(), "bytes": len(body)}

    # Idle TLS connections held open.
    for count in (2000, 3500):
        with fresh() as hook:
            conns = []
            for _ in range(count):
                try:
                    s = socket.create_connection(("127.0.0.1", hook.port), timeout=10)
                    conns.append(hook.ctx.wrap_socket(s, server_hostname="127.0.0.1"))
                except OSError:
                    pass
            time.sleep(0.5)
            rss = hook.rss_mb()
            still_open = 0
            for c in conns:
                try:
                    c.setblocking(False)
                    data = c.recv(1)
                    still_open += 0 if data == b"" else 1
                except ssl.SSLWantReadError:
                    still_open += 1
                except OSError:
                    pass
            for c in conns:
                try:
                    c.close()
                except OSError:
                    pass
            rows[f"idle_tls_{count}"] = {"rss_mb": rss, "served_open": still_open}

    # A header that never ends.
    with fresh() as hook:
        s = hook.ctx.wrap_socket(socket.create_connection(("127.0.0.1", hook.port)), server_hostname="127.0.0.1")
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\n")
        s.settimeout(60)
        start = time.perf_counter()
        try:
            s.recv(1)
        except OSError:
            pass
        rows["slow_header"] = {"closed_after_s": time.perf_counter() - start}

    # Header fields of the wrong type.
    with fresh() as hook:
        statuses = {}
        for field, value in (("apiVersion", 1), ("kind", []), ("operation", {}), ("namespace", 7),
                             ("kind_of_request", 3)):
            r = review(MARKER_JOB)
            if field in ("apiVersion", "kind"):
                r[field] = value
            elif field == "kind_of_request":
                r["request"]["kind"] = value
            else:
                r["request"][field] = value
            statuses[field] = hook.post(json.dumps(r))[0]
        rows["wrong_types"] = {"statuses": statuses, "alive": hook.alive()}
    return rows


def cli_classes(cli):
    """The CLI reading hostile YAML: time and peak RSS of `graintune explain FILE`."""
    rows = {}
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for i, name in enumerate("bcdefgh"):
        laughs += f"{name}: &{name} [" + ", ".join(["*" + prev] * 9) + "]\n"
        prev = name
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(laughs)
        path = f.name
    start = time.perf_counter()
    p = subprocess.Popen([cli, "explain", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace").strip().splitlines()
    rows["billion_laughs_cli"] = {"bytes": len(laughs), "seconds": time.perf_counter() - start,
                                  "peak_mb": usage.ru_maxrss / 1024, "exit": os.waitstatus_to_exitcode(status),
                                  "message": err[-1][:120] if err else ""}
    os.unlink(path)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--cli", action="append", default=[], help="NAME=path of the graintune CLI")
    ap.add_argument("webhooks", nargs="+", help="NAME=path of graintune-webhook")
    a = ap.parse_args()
    clis = dict(x.split("=", 1) for x in a.cli)
    results = {}
    for spec in a.webhooks:
        name, binary = spec.split("=", 1)
        has_probe_port = b"health-port" in open(binary, "rb").read()
        print(f"# {name}: {binary}", file=sys.stderr, flush=True)
        results[name] = run_classes(binary, a.cert, a.key, free_port if has_probe_port else None)
        if name in clis:
            results[name].update(cli_classes(clis[name]))
    names = list(results)

    def cell(row, keys):
        if row is None:
            return "-"
        parts = []
        for k in keys:
            v = row.get(k)
            if isinstance(v, float):
                v = f"{v:.2f}"
            parts.append(f"{k}={v}")
        return " ".join(parts)

    layout = [
        ("deep_131k", ["status", "seconds", "alive"]),
        ("sites_40k", ["status", "outcome", "seconds", "probe_worst_s"]),
        ("sites_135k", ["status", "outcome", "seconds", "probe_worst_s"]),
        ("empty_objects_3mb", ["status", "outcome", "seconds", "peak_mb"]),
        ("empty_objects_3mb_x2", ["status", "seconds", "peak_mb"]),
        ("args_80k_strings", ["status", "outcome", "seconds", "peak_mb"]),
        ("args_80k_strings_x2", ["status", "seconds", "peak_mb"]),
        ("idle_tls_2000", ["rss_mb", "served_open"]),
        ("idle_tls_3500", ["rss_mb", "served_open"]),
        ("slow_header", ["closed_after_s"]),
        ("wrong_types", ["statuses", "alive"]),
        ("billion_laughs_cli", ["seconds", "peak_mb", "exit"]),
    ]
    print("| class | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for cls, keys in layout:
        print(f"| {cls} | " + " | ".join(cell(results[n].get(cls), keys) for n in names) + " |")
    print(json.dumps({"hostile": results}, default=str))


if __name__ == "__main__":
    main()
