"""The embedded AWS: moto in server mode, with every resource created and wired.

Used by the local stack and by the integration tests alike: both get the
same tables, bus, rules, queues and schedule group, the same environment for
the handlers, and the same dispatcher.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from local.connections import ConnectionsEndpoint, Deliver
from local.dispatcher import Dispatcher
from local.resources import LocalResources, create_resources
from services.common.settings import Settings

REGION = "eu-west-1"
HANDLER_MODULES = (
    "services.turn.handler",
    "services.deal.handler",
    "services.score.handler",
    "services.connect.handler",
    "services.relay.handler",
)


def start_moto(port: int = 0) -> tuple[Any, str]:
    """A moto server on 127.0.0.1; returns it and its URL."""
    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - only the local stack needs moto

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, bound = server.get_host_and_port()
    return server, f"http://{host}:{bound}"


def base_environment(moto_url: str, connections_url: str, token_secret: str) -> dict[str, str]:
    """What the CDK stack sets on each function, pointed at the local endpoints."""
    return {
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "CANASTA_ENDPOINT_URL": moto_url,
        "CANASTA_WEBSOCKET_ENDPOINT": connections_url,
        "CANASTA_TOKEN_SECRET": token_secret,
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "Canasta",
        "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
    }


class LocalAws:
    """Resources on a running moto server, the connections endpoint and the dispatcher."""

    def __init__(
        self, moto_url: str, deliver: Deliver, token_secret: str, turn_seconds: int = 60
    ) -> None:
        self.moto_url = moto_url
        self.endpoint = ConnectionsEndpoint(deliver).start()
        self.environment = base_environment(moto_url, self.endpoint.url, token_secret)
        self.environment["CANASTA_TURN_SECONDS"] = str(turn_seconds)
        os.environ.update(self.environment)
        self.settings = Settings()
        self.resources: LocalResources = create_resources(self.settings, self.client)
        timers = {
            "CANASTA_TIMER_QUEUE_ARN": self.resources.timer_queue_arn,
            "CANASTA_SCHEDULER_ROLE_ARN": self.resources.scheduler_role_arn,
        }
        self.environment.update(timers)
        os.environ.update(timers)
        self.settings = Settings()
        reset_handlers()
        self.dispatcher = Dispatcher(
            client=self.client,
            queues=self.resources.queues,
            stream_arn=self.resources.stream_arn,
            schedule_group=self.settings.schedule_group,
            timer_queue_url=self.resources.queues["timers"],
        )

    def client(self, service: str) -> Any:
        import boto3  # noqa: PLC0415

        return boto3.client(service, endpoint_url=self.moto_url, region_name=REGION)

    def close(self) -> None:
        self.endpoint.stop()


def reset_handlers() -> None:
    """Forget every handler's cached service, so the next call wires from the new settings."""
    import importlib  # noqa: PLC0415

    for name in HANDLER_MODULES:
        importlib.import_module(name).service.cache_clear()


@contextmanager
def moto_server() -> Iterator[str]:
    server, url = start_moto()
    try:
        yield url
    finally:
        server.stop()
