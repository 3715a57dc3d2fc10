"""The event bus and its archive, one queue per consumer fed by its rule, and the turn timers.

Every consumer's queue has a dead-letter queue (``dead_letter_queues``): the
alarms, the dashboard, the operators' console and its ``stuck`` command read them
all, so a failure destination added later (the relay's, the turn timer schedules')
joins the same map.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_sqs as sqs

from infra import manifest
from infra.components.common import pascal
from infra.config import Config
from infra.manifest import TIMERS
from infra.nag import acknowledge
from services.common import constants

MAX_RECEIVE_COUNT = 5
EVENT_DELIVERY_RETRIES = 185
"""EventBridge's most retries of a delivery to a queue (within 24 h), then the dead letters."""
SCHEDULES = "turn-schedules"
"""The key of the turn timer schedules' dead-letter queue (``dead_letter_queues``)."""


class Messaging:
    def __init__(self, stack: Stack, config: Config) -> None:
        self._stack = stack
        self._config = config
        self.bus = self._event_bus()
        self.queues: dict[str, sqs.Queue] = {}
        self.dead_letter_queues: dict[str, sqs.Queue] = {}
        self._consumer_queues()
        self._timers()

    def dead_letter_queue(self, key: str, construct_id: str, name: str) -> sqs.Queue:
        """A queue that holds what ``key``'s consumer failed on, for two weeks."""
        queue = sqs.Queue(
            self._stack,
            construct_id,
            queue_name=self._config.name(name),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        self.dead_letter_queues[key] = queue
        return queue

    def _event_bus(self) -> events.EventBus:
        config = self._config
        bus = events.EventBus(
            self._stack, "EventBus", event_bus_name=config.name(constants.EVENT_BUS)
        )
        retention = config.archive_retention_days
        bus.archive(
            "Archive",
            archive_name=config.name("canasta-archive"),
            description="Every game event, for replay",
            event_pattern=events.EventPattern(source=events.Match.prefix(constants.EVENT_SOURCE)),
            retention=Duration.days(retention) if retention else None,
        )
        return bus

    def _queue(self, key: str, name: str) -> sqs.Queue:
        """A consumer's queue and its dead-letter queue (after ``MAX_RECEIVE_COUNT`` receives)."""
        dead = self.dead_letter_queue(key, f"{pascal(key)}DeadLetterQueue", f"{name}-dlq")
        queue = sqs.Queue(
            self._stack,
            f"{pascal(key)}Queue",
            queue_name=self._config.name(name),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(manifest.visibility_timeout_seconds(key)),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVE_COUNT, queue=dead),
        )
        self.queues[key] = queue
        return queue

    def _consumer_queues(self) -> None:
        """One queue per consumer, fed by one rule on its detail-types and their sources
        (``manifest.consumer_pattern``, as the local stack)."""
        for consumer, detail_types in manifest.CONSUMERS.items():
            queue = self._queue(consumer, constants.queue_name(consumer))
            rule = events.Rule(
                self._stack,
                f"{pascal(consumer)}Rule",
                rule_name=self._config.name(f"canasta-to-{consumer}"),
                description=f"{', '.join(detail_types)} to the {consumer} queue",
                event_bus=self.bus,
                event_pattern=events.EventPattern(detail_type=list(detail_types)),
                targets=[
                    targets.SqsQueue(
                        queue,
                        # Events EventBridge cannot deliver land with the consumer's failures.
                        dead_letter_queue=self.dead_letter_queues[consumer],
                        retry_attempts=EVENT_DELIVERY_RETRIES,
                        max_event_age=Duration.hours(24),
                    )
                ],
            )
            # EventPattern cannot say "$or"; the rule's pattern is the shared one, verbatim.
            cfn_rule: events.CfnRule = rule.node.default_child  # type: ignore[assignment]
            cfn_rule.event_pattern = manifest.consumer_pattern(consumer)

    def _timers(self) -> None:
        """Turn timers: one-time schedules in a group that send to the timer queue, and what
        Scheduler could not deliver to their own dead-letter queue."""
        stack = self._stack
        self.timer_queue = self._queue(TIMERS, constants.TIMER_QUEUE)
        self.schedule_dead_letter_queue = self.dead_letter_queue(
            SCHEDULES, "TurnScheduleDeadLetterQueue", constants.SCHEDULE_DEAD_LETTER_QUEUE
        )
        acknowledge(
            self.schedule_dead_letter_queue,
            "AwsSolutions-SQS3",
            "This queue is itself a dead-letter queue: the turn timer schedules' target "
            "dead-letter queue, which receives the timers Scheduler could not deliver.",
        )
        self.schedule_group_name = self._config.name(constants.SCHEDULE_GROUP)
        self.schedule_group = group = scheduler.ScheduleGroup(
            stack,
            "TurnTimerGroup",
            schedule_group_name=self.schedule_group_name,
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.scheduler_role = iam.Role(
            stack,
            "SchedulerRole",
            description="Assumed by EventBridge Scheduler to deliver turn timers",
            assumed_by=iam.ServicePrincipal(
                "scheduler.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": stack.account},
                    "ArnEquals": {"aws:SourceArn": group.schedule_group_arn},
                },
            ),
        )
        self.scheduler_role.add_to_policy(
            iam.PolicyStatement(
                actions=["sqs:SendMessage"],
                resources=[
                    self.timer_queue.queue_arn,
                    self.schedule_dead_letter_queue.queue_arn,
                ],
            )
        )
