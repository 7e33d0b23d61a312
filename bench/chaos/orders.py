"""The user's side: an order placed through the API, its files downloaded through their signed
links as they become ready (an order larger than the cache is staged in parts, so the user
takes what is ready and comes back), each download's MD5 compared with the original bytes."""
import threading
import time

FINAL = {"ready", "partially_ready", "completed", "failed", "cancelled", "expired"}


class OrderRun(threading.Thread):
    """Place an order for granule ids and download it; results in the attributes."""

    def __init__(self, api, granule_pks, originals, patience_s=600, label="order"):
        super().__init__(daemon=True, name=f"chaos-{label}")
        self.api, self.granule_pks, self.originals = api, granule_pks, originals
        self.patience_s, self.label = patience_s, label
        self.order_id, self.state, self.error = None, None, None
        self.downloaded, self.corrupt, self.unavailable, self.failed_items = {}, [], {}, []

    def place(self):
        status, answer = self.api.call("POST", "/api/v1/orders/",
                                       {"granules": self.granule_pks, "delivery": "https"})
        if status != 201:
            raise RuntimeError(f"{self.label} refused ({status}): {answer}")
        self.order_id = answer["id"]
        return self.order_id

    def run(self):
        try:
            self._follow()
        except Exception as exc:  # noqa: BLE001 - reported in the run's result
            self.error = repr(exc)

    def _follow(self):
        deadline = time.monotonic() + self.patience_s
        while time.monotonic() < deadline:
            status, listing = self.api.call("GET", f"/api/v1/orders/{self.order_id}/links/")
            if status != 200:
                raise RuntimeError(f"links of order {self.order_id}: {status} {listing}")
            self.state = listing["state"]
            self.failed_items = [(f["name"], f.get("error")) for f in listing["failed"]]
            for link in listing["links"]:
                if link["name"] not in self.downloaded:
                    self._download(link)
            pending = [link for link in listing["links"] if link["name"] not in self.downloaded]
            if self.state in FINAL and not listing["waiting"] and not pending:
                return
            time.sleep(1)
        self.error = (f"order {self.order_id} still {self.state} after {self.patience_s} s "
                      f"({len(self.downloaded)} files downloaded)")

    def _download(self, link):
        status, md5, size = self.api.fetch(link["url"])
        if status != 200:
            self.unavailable[link["name"]] = status  # not served: asked again on the next round
            return
        original = self.originals[link["name"]]
        self.downloaded[link["name"]] = md5
        if md5 != original.md5 or size != original.size:
            self.corrupt.append({"name": link["name"], "md5": md5, "want": original.md5,
                                 "size": size, "want_size": original.size})

    def summary(self):
        return {"order": self.order_id, "state": self.state, "granules": len(self.granule_pks),
                "downloaded": len(self.downloaded), "corrupt": self.corrupt,
                "failed_items": self.failed_items,
                "not_served": {k: v for k, v in self.unavailable.items()
                               if k not in self.downloaded},
                "error": self.error}
