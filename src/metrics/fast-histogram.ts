/**
 * A histogram for the hot path that prom-client's Registry serves and aggregates like its own.
 *
 * prom-client's `Histogram.observe` builds a closure, a label/value pair and a label hash on every
 * call (2% of a whole in-process decision under load: docs/decisions/histogram.md). Here a series is a
 * plain object whose `observe` is a bucket search and three additions; the series of one label set is
 * created once (`labels()`), the unlabelled one up front. At scrape time `get` / `getForPromString`
 * produce the same values, in the same shape and order, as prom-client's Histogram (cumulative
 * `_bucket` per bound, `+Inf`, `_sum`, `_count`), so the text format, `getMetricsAsJSON` and
 * `AggregatorRegistry.aggregate` (--workers) treat it as a histogram; a test compares both outputs for
 * the same observations.
 */
import type { Metric, Registry } from "prom-client";

/** One label set's counts. Counts per bucket are not cumulative; the export adds them up. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        this.counts[i] = (this.counts[i] ?? 0) + 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

export interface FastHistogramOptions {
  readonly name: string;
  readonly help: string;
  /** Upper bounds in increasing order (`+Inf` is implied). */
  readonly buckets: readonly number[];
  readonly labelNames?: readonly string[];
  readonly registers: readonly Registry[];
}

interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/** A histogram with prom-client's export and cheap observations; see the module comment. */
export class FastHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, HistogramSeries>();
  private readonly unlabelled: HistogramSeries;
  /** Whether `unlabelled` is in `series` (from the start; after `reset` from its next observation). */
  private unlabelledListed = false;

  constructor(options: FastHistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    this.bounds = [...options.buckets];
    for (let i = 1; i < this.bounds.length; i++) {
      if ((this.bounds[i] as number) <= (this.bounds[i - 1] as number))
        throw new RangeError(`${options.name}: buckets must increase`);
    }
    this.labelNames = options.labelNames ?? [];
    this.unlabelled = new HistogramSeries(this.bounds, {});
    // As prom-client: a histogram without label names exports its (zero) series from the start.
    if (this.labelNames.length === 0) this.listUnlabelled();
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** Observe a value in the series without labels. */
  observe(value: number): void {
    this.unlabelled.observe(value);
    if (!this.unlabelledListed) this.listUnlabelled();
  }

  private listUnlabelled(): void {
    this.series.set("", this.unlabelled);
    this.unlabelledListed = true;
  }

  /** The series of `labels` (every name in `labelNames`); keep it: the lookup is the slow part. */
  labels(labels: Readonly<Record<string, string>>): HistogramSeries {
    const names = Object.keys(labels);
    for (const n of names)
      if (!this.labelNames.includes(n))
        throw new Error(`Added label "${n}" is not included in initial labelset`);
    const key = JSON.stringify(this.labelNames.map((n) => labels[n] ?? ""));
    let s = this.series.get(key);
    if (s === undefined) {
      s = new HistogramSeries(this.bounds, { ...labels });
      this.series.set(key, s);
    }
    return s;
  }

  reset(): void {
    this.series.clear();
    this.unlabelled.counts.fill(0);
    this.unlabelled.sum = 0;
    this.unlabelled.count = 0;
    this.unlabelledListed = false; // as prom-client: nothing exported until observed again
  }

  /** For the text format: bucket labels apart from the series' own (`sharedLabels`), as prom-client. */
  async getForPromString() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.exported(),
    };
  }

  /** For `getMetricsAsJSON` and worker aggregation: every label on the value, as prom-client. */
  async get() {
    const values = this.exported().map(({ labels, sharedLabels, value, metricName, exemplar }) => ({
      value,
      metricName,
      exemplar,
      labels: { ...labels, ...sharedLabels },
    }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  private exported(): ExportedValue[] {
    const out: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i] ?? 0;
        out.push({
          labels: { le: this.bounds[i] as number },
          sharedLabels: s.labels,
          value: acc,
          metricName: bucket,
          exemplar: null,
        });
      }
      out.push(
        {
          labels: { le: "+Inf" },
          sharedLabels: s.labels,
          value: s.count,
          metricName: bucket,
          exemplar: null,
        },
        {
          labels: {},
          sharedLabels: s.labels,
          value: s.sum,
          metricName: `${this.name}_sum`,
          exemplar: undefined,
        },
        {
          labels: {},
          sharedLabels: s.labels,
          value: s.count,
          metricName: `${this.name}_count`,
          exemplar: undefined,
        },
      );
    }
    return out;
  }
}
