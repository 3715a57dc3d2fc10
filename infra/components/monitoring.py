"""The alarms and the dashboard: every function, dead-letter queue and ticket, watched.

An alarm is on what needs someone: a failed or throttled invocation, a message
in a dead-letter queue, an event nobody routes, a slow move, a relay falling
behind, a ticket whose player waits for nothing, a turn timer Scheduler lost.
Every alarm is made by ``Monitoring._alarm``, which points it at the alarm topic
(``infra.components.alarm_topic``) when it fires and when it clears, so an alarm
added later cannot page nobody. The dashboard graphs the same beside the game's
own counts.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs

from infra.components.alarm_topic import alarm_topic
from infra.components.backbone import Backbone
from infra.components.common import METRICS_NAMESPACE, alarm_name, pascal
from infra.manifest import FUNCTIONS
from services.common.runtime import UNKNOWN_EVENTS

DASHBOARD_METRICS = (
    ("turn", "actions_applied"),
    ("turn", "auto_played_turns"),
    ("turn", "refused_stale_version"),
    ("deal", "rounds_dealt"),
    ("score", "rounds_scored"),
    ("score", "matches_ended"),
    ("connect", "tokens_refused"),
    ("relay", "events_published"),
)
"""(service, metric) of the custom metrics on the dashboard (namespace ``Canasta``)."""
MATCHMAKING_METRICS = ("tickets_opened", "tables_formed", "tickets_expired", "tickets_abandoned")
LEDGER_METRICS = ("ledger_settlements", "ledger_refunds")
"""The matchmaking and ledger widgets' custom metrics (dimension ``service``)."""
FIVE_MINUTES = Duration.minutes(5)
ABOVE = cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD


def service_count(service: str, name: str, *, labelled: bool = False) -> cloudwatch.Metric:
    """A service's custom count (namespace ``Canasta``, dimension ``service``), summed over
    five minutes; ``labelled`` for a graph (an alarm on a labelled metric becomes metric math)."""
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": service},
        statistic="Sum",
        period=FIVE_MINUTES,
        label=name if labelled else None,
    )


def _dead_letters(queue: sqs.Queue, label: str | None = None) -> cloudwatch.Metric:
    return queue.metric_approximate_number_of_messages_visible(
        period=Duration.minutes(1), statistic="Maximum", label=label
    )


def _relay_lag(relay: lambda_.Function) -> cloudwatch.Metric:
    """How far (ms) the outbox relay is behind the games table's stream."""
    return relay.metric("IteratorAge", period=Duration.minutes(1), statistic="Maximum")


def _graph(title: str, metrics: list[cloudwatch.IMetric]) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(title=title, left=metrics, width=8, height=6)


class Monitoring:
    def __init__(self, backbone: Backbone, functions: Mapping[str, lambda_.Function]) -> None:
        self._backbone = backbone
        self._functions = functions
        self._dead_letter_queues = backbone.messaging.dead_letter_queues
        self._state_machine = backbone.matchmaking.state_machine
        self.topic = alarm_topic(backbone.stack, backbone.config)
        self._notify = actions.SnsAction(self.topic)
        self._function_alarms()
        self._dead_letter_alarms()
        self._unknown_event_alarms()
        self._lag_alarms()
        self._ticket_alarms()
        self._timer_alarms()
        self._dashboard()

    def _alarm(
        self,
        construct_id: str,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        *,
        comparison: cloudwatch.ComparisonOperator = (
            cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        ),
        periods: int = 1,
        datapoints: int = 1,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self._backbone.stack,
            construct_id,
            alarm_name=alarm_name(self._backbone.config, name),
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=periods,
            datapoints_to_alarm=datapoints,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(self._notify)
        alarm.add_ok_action(self._notify)

    def _function_alarms(self) -> None:
        for key, function in self._functions.items():
            self._alarm(
                f"{pascal(key)}ErrorsAlarm",
                f"{key}-errors",
                function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                1,
                f"{key} failed an invocation (an uncaught error or a timeout)",
            )
            self._alarm(
                f"{pascal(key)}ThrottlesAlarm",
                f"{key}-throttles",
                function.metric_throttles(period=FIVE_MINUTES, statistic="Sum"),
                1,
                f"{key} was throttled",
            )

    def _dead_letter_alarms(self) -> None:
        for key, queue in self._dead_letter_queues.items():
            self._alarm(
                f"{pascal(key)}DeadLettersAlarm",
                f"{key}-dead-letters",
                _dead_letters(queue),
                0,
                f"Messages wait in {queue.node.id}: look at them, fix, redrive",
                comparison=ABOVE,
            )

    def _unknown_event_alarms(self) -> None:
        for service in sorted({spec.service for spec in FUNCTIONS.values() if spec.consumes}):
            self._alarm(
                f"{pascal(service)}UnknownEventsAlarm",
                f"{service}-unknown-events",
                service_count(service, UNKNOWN_EVENTS),
                1,
                f"The {service} service received events its routing table does not route "
                "(acknowledged and logged as 'unknown event'): its rule and its table differ",
            )

    def _lag_alarms(self) -> None:
        threshold = self._backbone.config.turn_p99_alarm_ms
        self._alarm(
            "TurnWsDurationP99Alarm",
            "turn-ws-duration-p99",
            self._functions["turn-ws"].metric_duration(period=FIVE_MINUTES, statistic="p99"),
            threshold,
            f"p99 of a move's handling above {threshold} ms",
            comparison=ABOVE,
            periods=3,
            datapoints=2,
        )
        self._alarm(
            "RelayIteratorAgeAlarm",
            "relay-iterator-age",
            _relay_lag(self._functions["relay"]),
            60_000,
            "The outbox relay is more than a minute behind the games table",
            comparison=ABOVE,
            periods=5,
            datapoints=3,
        )

    def _ticket_alarms(self) -> None:
        machine = self._state_machine
        self._alarm(
            "MatchmakingExecutionsFailedAlarm",
            "matchmaking-executions-failed",
            machine.metric_failed(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "A matchmaking ticket failed (a try_match task unanswered for 300 s, or an error): "
            "its player waits for nothing",
        )
        self._alarm(
            "MatchmakingExecutionsTimedOutAlarm",
            "matchmaking-executions-timed-out",
            machine.metric_timed_out(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "A matchmaking ticket's execution timed out",
        )
        # Catch → Abandon succeeds: the failed-executions alarm never sees these.
        self._alarm(
            "MatchmakingTicketsAbandonedAlarm",
            "matchmaking-tickets-abandoned",
            service_count("matchmaking", "tickets_abandoned"),
            1,
            "A ticket's task went unanswered: its try_match could not be sent, or the "
            "ticket was seated or left without its token answered (a try_match never "
            "delivered, a function that died after its write): the execution waited out "
            "the queue time",
        )

    def _timer_alarms(self) -> None:
        """Far-deadline turn timers are schedules: one Scheduler cannot deliver is a turn
        nobody auto-plays. Those it puts in their dead-letter queue are alarmed on with
        the other dead letters; these are the ones it could not even put there."""
        group = self._backbone.messaging.schedule_group
        self._alarm(
            "TurnSchedulesDroppedAlarm",
            "turn-schedules-dropped",
            group.metric_dropped(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "Scheduler dropped a turn timer after its retries: that turn is not auto-played",
        )
        self._alarm(
            "TurnSchedulesDeadLetterFailedAlarm",
            "turn-schedules-dead-letter-failed",
            group.metric_failed_to_be_sent_to_dlq(period=FIVE_MINUTES, statistic="Sum"),
            1,
            "Scheduler failed to deliver a turn timer and to put it in its dead-letter queue: "
            "the timer is lost (check the scheduler role and the queue)",
        )

    def _dashboard(self) -> None:
        functions = self._functions.items()
        machine = self._state_machine
        dashboard = cloudwatch.Dashboard(
            self._backbone.stack, "Dashboard", dashboard_name=self._backbone.config.name("canasta")
        )
        dashboard.add_widgets(
            _graph(
                "Invocations",
                [f.metric_invocations(period=FIVE_MINUTES, label=k) for k, f in functions],
            ),
            _graph("Errors", [f.metric_errors(period=FIVE_MINUTES, label=k) for k, f in functions]),
            _graph(
                "Duration p99 (ms)",
                [
                    f.metric_duration(period=FIVE_MINUTES, statistic="p99", label=k)
                    for k, f in functions
                ],
            ),
        )
        dashboard.add_widgets(
            _graph(
                "Game",
                [service_count(s, metric, labelled=True) for s, metric in DASHBOARD_METRICS],
            ),
            _graph(
                "Dead letters",
                [_dead_letters(q, label=k) for k, q in self._dead_letter_queues.items()],
            ),
            _graph("Relay lag (ms)", [_relay_lag(self._functions["relay"])]),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Matchmaking",
                left=_counts("matchmaking", MATCHMAKING_METRICS),
                right=[
                    machine.metric_failed(period=FIVE_MINUTES, label="executions failed"),
                    machine.metric_timed_out(period=FIVE_MINUTES, label="executions timed out"),
                ],
                width=8,
                height=6,
            ),
            _graph("Ledger", _counts("ledger", LEDGER_METRICS)),
        )


def _counts(service: str, names: tuple[str, ...]) -> list[cloudwatch.IMetric]:
    return [service_count(service, name, labelled=True) for name in names]
