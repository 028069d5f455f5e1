"""Google Cloud Storage with every bucket empty, on loopback, for the start check in the judge.

The generated shapes (shapes.py) are first starts: whatever bucket their checkpoint_dir names
holds no checkpoint yet. graintune's start check reads the run's checkpoint through MaxText's own
etils.epath, which reaches GCS through gcsfs; with no network here, gcsfs retries for about 50 s
and the check (rightly) leaves the start as written. Pointed at this server
(STORAGE_EMULATOR_HOST), the same gcsfs code answers as GCS does for an empty bucket: an object
that is not there is a 404, a listing is empty. Nothing else of the API is served.
"""

from __future__ import annotations

import http.server
import json
import threading


class _EmptyBucket(http.server.BaseHTTPRequestHandler):
  def do_GET(self) -> None:  # pylint: disable=invalid-name
    listing = "/o?" in self.path or self.path.rstrip("/").endswith("/o")
    body = json.dumps({"kind": "storage#objects"} if listing else
                      {"error": {"code": 404, "message": "No such object"}}).encode()
    self.send_response(200 if listing else 404)
    self.send_header("Content-Type", "application/json")
    self.send_header("Content-Length", str(len(body)))
    self.end_headers()
    self.wfile.write(body)

  def log_message(self, *_) -> None:
    pass


class EmptyBuckets:
  """The server, on a free loopback port, until close()."""

  def __init__(self):
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EmptyBucket)
    self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
    self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
    self.thread.start()

  def close(self) -> None:
    self.server.shutdown()
    self.server.server_close()
