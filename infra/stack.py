"""The whole backend in one stack: tables, bus, queues, timers, the matchmaking state machine,
WebSocket API, functions, alarms and their topic, and the players' sign-in (a Cognito user
pool, unless an existing OpenID Connect issuer is configured).

Names and keys come from ``services.common.constants`` (the module the local
stack builds from too) and every function from ``infra.manifest.FUNCTIONS``.
Each physical name is prefixed with the stage (``dev-canasta-games``), so
several stages can live in one account. The parts are built in ``infra.components``,
each into this stack itself (that package says why), in the order they depend on.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Annotations, Stack
from constructs import Construct

from infra.assets import Assets
from infra.components.backbone import Backbone
from infra.components.functions import Functions
from infra.components.matchmaking import Matchmaking
from infra.components.messaging import Messaging
from infra.components.monitoring import Monitoring
from infra.components.operators import OperatorPolicies
from infra.components.outputs import add_outputs
from infra.components.sign_in import SignIn
from infra.components.tables import build_tables
from infra.components.websocket import WebSocket
from infra.config import Config
from infra.needs import needs_metadata


class CanastaStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: Config,
        assets: Assets,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description=f"Team Canasta game backend ({config.stage})",
            **kwargs,
        )
        self.template_options.metadata = {"Canasta::AccountNeeds": needs_metadata(config)}
        tables = build_tables(self, config)
        messaging = Messaging(self, config)
        self.backbone = Backbone(
            stack=self,
            config=config,
            tables=tables,
            messaging=messaging,
            matchmaking=Matchmaking(self, config, messaging.queues),
            sign_in=SignIn(self, config),
            websocket=WebSocket(self, config),
        )
        self.functions = Functions(self.backbone, assets)
        self.backbone.websocket.add_routes(self.functions.by_key)
        monitoring = Monitoring(self.backbone, self.functions.by_key)
        self.operators = OperatorPolicies(self.backbone, self.functions)
        add_outputs(self.backbone, self.functions, self.operators, monitoring.topic)
        if config.retain_data and not config.protect_tables:
            Annotations.of(self).add_info(
                "Deletion protection is off, so that a failed first create rolls back: once "
                "this stage is created, deploy it again with -c deletionProtection=true."
            )
