"""The operator process's one metrics registry, and summaries with quantiles of recent samples.

Every controller of the process registers its own counters and gauges
(``prometheus_client.Counter``/``Gauge``) or collectors in :func:`process_registry`'s registry,
which ``/metrics`` renders with ``prometheus_client.generate_latest``; nothing in the operator
writes exposition text by hand.

``prometheus_client`` adds a ``<name>_created`` series to every counter it owns. The operator's
documented families (docs/operator.md, docs/gangs.md) have none, and the scrapes of every
replica would carry one more series per counter, so the registry's process turns them off
(``disable_created_metrics``: the setting is the client library's, one per process, as the
registry is).

The latency families are summaries whose quantiles are computed at scrape time over the last
samples kept in a bounded deque (``prometheus_client.Summary`` exports no quantiles):
:func:`quantile_summary` builds such a family for a custom collector.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry, Counter, disable_created_metrics
from prometheus_client.core import SummaryMetricFamily
from prometheus_client.samples import Sample

__all__ = ["QuantileRow", "counter_value", "process_registry", "quantile_summary"]

#: (label values, recent samples, sum over the process's life, count over the process's life)
QuantileRow = tuple[Sequence[str], Iterable[float], float, float]


def process_registry() -> CollectorRegistry:
    """A registry for one operator process (``auto_describe``: a second registration of one
    metric name fails at start rather than showing twice in a scrape)."""
    disable_created_metrics()  # type: ignore[no-untyped-call]  # the library's, untyped
    return CollectorRegistry(auto_describe=True)


def quantile_summary(
    name: str,
    documentation: str,
    labels: Sequence[str],
    rows: Iterable[QuantileRow],
    quantiles: Sequence[float] = (0.5, 0.9, 0.99),
) -> SummaryMetricFamily:
    """A summary family: per row, each quantile of its recent samples (the nearest-rank value,
    0 when there are none), then its ``_sum`` and ``_count``."""
    family = SummaryMetricFamily(name, documentation, labels=list(labels))
    for values, recent, total, count in rows:
        ordered = sorted(recent)
        base = dict(zip(labels, values, strict=True))
        for q in quantiles:
            v = ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0
            family.samples.append(Sample(name, {**base, "quantile": str(q)}, v))
        family.add_metric(list(values), count_value=int(count), sum_value=total)
    return family


def counter_value(counter: Counter) -> float:
    """The current value of an unlabelled counter (read as a scrape reads it)."""
    for family in counter.collect():
        for sample in family.samples:
            if sample.name.endswith("_total"):
                return sample.value
    return 0.0
