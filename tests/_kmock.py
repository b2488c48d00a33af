"""kmock's Kubernetes API emulator for the tests of the Kubernetes rollout backend and run executor.

No kube-apiserver can be installed here; kmock answers the official client's calls on 127.0.0.1, from an
event loop of its own in a thread. Import it after `pytest.importorskip("kmock")`.
"""

import asyncio
import threading
from typing import Any

import kmock
from kubernetes import client


class Emulator:
    """kmock's KubernetesEmulator on 127.0.0.1, served from its own event-loop thread.

    Args:
        jobs: Also serve batch/v1 Jobs (kmock serves only the resources declared to it besides pods).
    """

    def __init__(self, jobs: bool = False) -> None:
        self._jobs = jobs
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        assert ready.wait(20), "kmock did not start"
        config = client.Configuration()
        config.host = self.url
        self.api_client = client.ApiClient(config)
        self.core = client.CoreV1Api(self.api_client)
        self.batch = client.BatchV1Api(self.api_client)

    def _serve(self, ready: threading.Event) -> None:
        async def main() -> None:
            async with kmock.KubernetesEmulator() as handler, kmock.Server(handler) as server:
                if self._jobs:
                    handler.resources["batch/v1/jobs"] = kmock.ResourceInfo(
                        namespaced=True, kind="Job", singular="job", subresources={"status"}
                    )
                self.handler, self.url = handler, str(server.url)
                self.loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
                ready.set()
                await self._stop.wait()

        asyncio.run(main())

    def logs(self, text: str) -> None:
        """What every pod-log request answers from now on (kmock would return the pod's JSON)."""
        text_plain = kmock.headers({"Content-Type": "text/plain"})
        self.handler[kmock.subresource("log")] << text_plain << text.encode()

    def set_status(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        """Play the kubelet."""
        self.core.patch_namespaced_pod_status(name, namespace, {"status": status})

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)
